import { mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import { insertOrg, insertOrgMember, insertTeam, insertTeamMember, insertUser } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startControlPlaneServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOf } from './control-plane-helpers.ts';
import { agentSpec, allEvents, json } from './helpers.ts';

const skillMd = (name: string, description: string) =>
  `---\nname: ${name}\ndescription: ${description}\n---\n\n# ${name}\n\nFollow the steps.\n`;

describe.each(testDatabases())('the skills registry on $name', (database) => {
  let server: TestServer;
  /** A user of another organization (`other`), with a `read,publish` token and a read-only one. */
  let outsider: { token: string; readOnly: string };
  /** The admin's token without `publish`. */
  let adminReadOnly: string;

  beforeAll(async () => {
    server = await startControlPlaneServer(database);
    const { db } = server.paddock.services.store;
    const at = timestamp();
    const [orgId, teamId, userId] = [newId(), newId(), newId()];
    await insertOrg(db, { id: orgId, name: 'other', created_at: at });
    await insertTeam(db, { id: teamId, org_id: orgId, name: 'other', created_at: at });
    await insertUser(db, {
      id: userId,
      username: 'outsider',
      password_hash: null,
      issuer: null,
      subject: null,
      created_at: at,
    });
    await insertOrgMember(db, { org_id: orgId, user_id: userId, role: 'owner', created_at: at });
    await insertTeamMember(db, { team_id: teamId, user_id: userId, role: 'owner', created_at: at });
    const mint = (user: string, scopes: ('read' | 'publish')[]) =>
      mintToken(db, { kind: 'pat', userId: user, name: 'test', scopes }).then((t) => t.token);
    outsider = { token: await mint(userId, ['read', 'publish']), readOnly: await mint(userId, ['read']) };
    const admin = await db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    adminReadOnly = await mint(admin.id, ['read']);
  });
  afterAll(() => server.close());

  const publish = (path: string, body: unknown, token?: string) =>
    server.request('PUT', `/v2/skills/${path}`, { body, token });

  it('publishes immutable versions: 201, the same content again 200, other content 409; reads them back', async () => {
    const files = [
      { path: 'SKILL.md', content: skillMd('lint', 'Lints the code') },
      { path: 'scripts/run.sh', content: 'echo lint\n' },
      { path: 'logo.bin', content: Buffer.from([0, 255, 1, 254]).toString('base64'), encoding: 'base64' },
    ];
    const created = await json<Record<string, unknown>>(
      await publish('default/lint/versions/1.0.0', { files }),
      201,
    );
    expect(created).toMatchObject({
      creator: 'default',
      slug: 'lint',
      version: '1.0.0',
      name: 'lint',
      description: 'Lints the code',
      public: false,
    });
    // Idempotent: the same files, in another order, answer the stored version.
    const again = await json(
      await publish('default/lint/versions/1.0.0', { files: [...files].reverse() }),
      200,
    );
    expect(again).toEqual(created);
    const changed = files.map((f) => (f.path === 'scripts/run.sh' ? { ...f, content: 'echo changed\n' } : f));
    const conflict = await json<{ detail: { code: string } }>(
      await publish('default/lint/versions/1.0.0', { files: changed }),
      409,
    );
    expect(conflict.detail.code).toBe('skill_version_conflict');

    await json(await publish('default/lint/versions/1.10.0', { files }), 201);
    await json(await publish('default/lint/versions/2.0.0-beta.1', { files }), 201);
    await json(await publish('default/lint/versions/1.2.0', { files }), 201);
    expect(await json(await server.request('GET', '/v2/skills/default/lint'), 200)).toEqual({
      creator: 'default',
      slug: 'lint',
      versions: ['1.0.0', '1.2.0', '1.10.0', '2.0.0-beta.1'],
      latest: '1.10.0',
    });
    const version = await json<{ files: unknown[] }>(
      await server.request('GET', '/v2/skills/default/lint/versions/1.0.0'),
      200,
    );
    expect(version.files).toEqual([
      { path: 'SKILL.md', content: skillMd('lint', 'Lints the code'), encoding: 'utf8' },
      { path: 'logo.bin', content: files[2].content, encoding: 'base64' },
      { path: 'scripts/run.sh', content: 'echo lint\n', encoding: 'utf8' },
    ]);
    const listing = await json<{ items: { slug: string; latest: string }[] }>(
      await server.request('GET', '/v2/skills/default'),
      200,
    );
    expect(listing.items.map((s) => [s.slug, s.latest])).toContainEqual(['lint', '1.10.0']);
    expect((await server.request('GET', '/v2/skills/default/lint/versions/9.9.9')).status).toBe(404);
  });

  it('refuses content without a SKILL.md and its front matter, unsafe paths, bad versions, and too much (422)', async () => {
    const cases: [string, unknown][] = [
      ['default/bad/versions/1.0.0', { files: [{ path: 'README.md', content: 'no skill' }] }],
      ['default/bad/versions/1.0.0', { files: [{ path: 'SKILL.md', content: '# no front matter' }] }],
      ['default/bad/versions/1.0.0', { files: [{ path: 'SKILL.md', content: '---\nname: x\n---\n' }] }],
      [
        'default/bad/versions/1.0.0',
        {
          files: [
            { path: 'SKILL.md', content: skillMd('x', 'y') },
            { path: '../escape', content: '' },
          ],
        },
      ],
      [
        'default/bad/versions/1.0.0',
        {
          files: [
            { path: 'SKILL.md', content: skillMd('x', 'y') },
            { path: '/etc/passwd', content: '' },
          ],
        },
      ],
      ['default/bad/versions/1.0', { files: [{ path: 'SKILL.md', content: skillMd('x', 'y') }] }],
      [
        'default/bad/versions/1.0.0',
        {
          files: [
            { path: 'SKILL.md', content: skillMd('x', 'y') },
            {
              path: 'big.bin',
              content: Buffer.alloc(2 * 1024 * 1024).toString('base64'),
              encoding: 'base64',
            },
          ],
        },
      ],
    ];
    for (const [path, body] of cases) {
      const response = await publish(path, body);
      expect(response.status, `${path} ${JSON.stringify(body).slice(0, 200)}`).toBe(422);
    }
    expect((await server.request('GET', '/v2/skills/default/bad')).status).toBe(404);
  });

  it('lets only members of the creator organization publish (scope publish), and others read only public versions', async () => {
    const files = [{ path: 'SKILL.md', content: skillMd('secret', 'Internal only') }];
    // Not a member of `default`.
    expect((await publish('default/theirs/versions/1.0.0', { files }, outsider.token)).status).toBe(403);
    // A member without `publish`.
    expect((await publish('default/theirs/versions/1.0.0', { files }, adminReadOnly)).status).toBe(403);
    await json(await publish('default/private/versions/1.0.0', { files }), 201);
    await json(await publish('default/shared/versions/1.0.0', { files, public: true }), 201);
    // Another organization sees the public skill and nothing of the private one.
    const read = (path: string) => server.request('GET', `/v2/skills/${path}`, { token: outsider.readOnly });
    expect((await read('default/private')).status).toBe(404);
    expect((await read('default/private/versions/1.0.0')).status).toBe(404);
    expect(await json(await read('default/shared'), 200)).toMatchObject({ latest: '1.0.0' });
    expect((await read('default/shared/versions/1.0.0')).status).toBe(200);
    const listing = await json<{ items: { slug: string }[] }>(await read('default'), 200);
    expect(listing.items.map((s) => s.slug)).toContain('shared');
    expect(listing.items.map((s) => s.slug)).not.toContain('private');
    // Its own organization publishes under its own name, never into another's.
    await json(await publish('other/tools/versions/0.1.0', { files }, outsider.token), 201);
    expect((await read('other/tools')).status).toBe(200);
    expect((await server.request('GET', '/v2/skills/other/tools')).status).toBe(404);
    // Changing a version's visibility is other content.
    expect((await publish('default/shared/versions/1.0.0', { files })).status).toBe(409);
  });

  it('resolves registry sources when an agent is made or changed (422 naming an unknown one) and at thread start', async () => {
    const files = (text: string) => [{ path: 'SKILL.md', content: skillMd('fmt', text) }];
    await json(await publish('default/fmt/versions/1.0.0', { files: files('one') }), 201);
    for (const source of ['registry:default/nope', 'registry:default/fmt@9.0.0', 'registry:other/tools']) {
      const response = await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ skills: [{ source }] }) },
      });
      const body = await json<{ detail: { code: string; message: string; source: string } }>(response, 422);
      expect(body.detail).toMatchObject({ code: 'unknown_skill', source });
      expect(body.detail.message).toContain(source);
    }
    // Public skills of another organization can be used.
    await json(
      await publish('other/public-tool/versions/1.0.0', { files: files('p'), public: true }, outsider.token),
      201,
    );
    const { agent_id, thread_id } = await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({
            instructions: 'skills agent',
            skills: [{ source: 'registry:default/fmt' }, { source: 'registry:other/public-tool@1.0.0' }],
          }),
        },
      }),
      201,
    );
    const resolved = (await allEvents(server, thread_id)).filter((e) => e.type === 'skills.resolved');
    expect(resolved.map((e) => e.data)).toEqual([
      {
        skills: [
          { source: 'registry:default/fmt', creator: 'default', slug: 'fmt', version: '1.0.0' },
          {
            source: 'registry:other/public-tool@1.0.0',
            creator: 'other',
            slug: 'public-tool',
            version: '1.0.0',
          },
        ],
      },
    ]);
    // An unpinned source takes the newest version at each thread's start.
    await json(await publish('default/fmt/versions/1.1.0', { files: files('two') }), 201);
    const second = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent_id } }),
      201,
    );
    const [event] = (await allEvents(server, second.thread_id)).filter((e) => e.type === 'skills.resolved');
    expect((event.data.skills as { version: string }[]).map((s) => s.version)).toEqual(['1.1.0', '1.0.0']);

    const patch = (skills: unknown) =>
      server.request('PATCH', `/v2/agents/${agent_id}`, { body: { skills } });
    const refused = await json<{ detail: { code: string; source: string } }>(
      await patch([{ source: 'registry:default/missing@1.0.0' }]),
      422,
    );
    expect(refused.detail).toMatchObject({ code: 'unknown_skill', source: 'registry:default/missing@1.0.0' });
    expect(await json(await patch([{ source: 'registry:default/fmt@1.0.0' }]), 200)).toMatchObject({
      skills: [{ source: 'registry:default/fmt@1.0.0' }],
    });
    // Two skills of one slug would be one folder in the sandbox.
    expect(
      (await patch([{ source: 'registry:default/fmt@1.0.0' }, { source: 'registry:default/fmt@1.1.0' }]))
        .status,
    ).toBe(422);
  });

  it('a manifest skill component with its files publishes that version and pins the agent to it', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: 'manifest agent' }) },
      }),
      201,
    );
    const cli = cliOf(server);
    const component = (version: string, text: string, extra: object = {}) => ({
      type: 'skill',
      name: 'default/review',
      files: [
        {
          path: 'SKILL.md',
          content: `---\nname: review\ndescription: Reviews\nversion: ${version}\n---\n${text}`,
        },
        { path: 'checklist.md', content: '- tests\n' },
      ],
      ...extra,
    });
    const put = (components: unknown[]) =>
      cli('PUT', `/agents/${agent_id}/manifest`, { body: { components } });
    const first = await json<{
      warnings?: { code: string }[];
      components: { type: string; files: { content: string }[] }[];
    }>(await put([component('1.0.0', 'v1')]), 200);
    expect(first.warnings).toBeUndefined();
    // The agent names the published version; a pull shows it as a reference.
    const skill = first.components.find((c) => c.type === 'skill');
    expect(JSON.parse(skill!.files[0].content)).toEqual({ source: 'registry:default/review@1.0.0' });
    const version = await json<{ files: { path: string }[] }>(
      await server.request('GET', '/v2/skills/default/review/versions/1.0.0'),
      200,
    );
    expect(version.files.map((f) => f.path)).toEqual(['SKILL.md', 'checklist.md']);
    // The same again is no change; other content for that version is a warning, and the pin stays.
    expect(
      (await json<{ warnings?: unknown[] }>(await put([component('1.0.0', 'v1')]), 200)).warnings,
    ).toBeUndefined();
    const clash = await json<{ warnings?: { code: string }[] }>(
      await put([component('1.0.0', 'v1 changed')]),
      200,
    );
    expect(clash.warnings?.map((w) => w.code)).toEqual(['skill_version_conflict']);
    // A new version moves the pin; skill.json may name the version instead of the front matter.
    const pinned = component('9.9.9', 'v2', {});
    pinned.files.push({
      path: 'skill.json',
      content: JSON.stringify({ source: 'registry:default/review@2.0.0' }),
    });
    await json(await put([pinned]), 200);
    const agent = await json<{ skills: unknown[] }>(
      await server.request('GET', `/v2/agents/${agent_id}`),
      200,
    );
    expect(agent.skills).toEqual([{ source: 'registry:default/review@2.0.0' }]);
    expect(await json(await server.request('GET', '/v2/skills/default/review'), 200)).toMatchObject({
      versions: ['1.0.0', '2.0.0'],
    });
    // A creator the caller is not a member of is a warning.
    const foreign = { ...component('1.0.0', 'x'), name: 'other/review' };
    const refused = await json<{ warnings?: { code: string }[] }>(await put([foreign]), 200);
    expect(refused.warnings?.map((w) => w.code)).toEqual(['forbidden']);
  });
});
