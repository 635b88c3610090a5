import { createHash } from 'node:crypto';
import { newId, timestamp } from '@paddock/protocol';
import { insertOrg, insertOrgMember } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliOf, createAgent, strangerToken } from './control-plane-helpers.ts';
import { adminTokenWith, allEvents, json, settled } from './helpers.ts';

interface File {
  path: string;
  content: string;
}
interface Component {
  type: string;
  name: string;
  files: File[];
  hash: string;
  status?: string;
}
interface Warning {
  type: string;
  name: string;
  code: string;
  message: string;
}
interface Manifest {
  agent_id: string;
  revision: string;
  components: Component[];
  warnings?: Warning[];
}

const jsonFile = (path: string, value: unknown): File => ({
  path,
  content: `${JSON.stringify(value, null, 2)}\n`,
});
const instructions = (text: string) => ({
  type: 'instructions',
  name: 'instructions',
  files: [{ path: 'instructions.md', content: text }],
});
const skill = (source: string) => ({
  type: 'skill',
  name: source.replace(/^registry:/, '').replace(/@.*$/, ''),
  files: [jsonFile('skill.json', { source })],
});
const mcpServer = (name: string, config: Record<string, unknown>) => ({
  type: 'mcp_server',
  name,
  files: [jsonFile('server.json', config)],
});
const playbook = (name: string, content = `# ${name}\n`) => ({
  type: 'playbook',
  name,
  files: [{ path: 'playbook.md', content }],
});
const evalComponent = (name: string, criteria = `${name} criteria`) => ({
  type: 'eval',
  name,
  files: [{ path: 'criteria.md', content: criteria }],
});
/** What a client sends back: the components without the server's hash and status. */
const asPublished = (components: Component[]) =>
  components.map(({ type, name, files }) => ({ type, name, files }));

describe.each(testDatabases())('manifests on $name', (database) => {
  let server: TestServer;
  let cli: ReturnType<typeof cliOf>;
  beforeAll(async () => {
    server = await startTestServer(database);
    cli = cliOf(server);
    // The registry skills the agents name (D14: a source must resolve), published public by an
    // `acme` organization of the admin's, so agents of the admin's `default` one may use them.
    const { db } = server.paddock.services.store;
    const admin = await db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    const orgId = newId();
    await insertOrg(db, { id: orgId, name: 'acme', created_at: timestamp() });
    await insertOrgMember(db, { org_id: orgId, user_id: admin.id, role: 'owner', created_at: timestamp() });
    for (const [slug, version] of [
      ['lint', '1.2.0'],
      ['lint', '1.3.0'],
      ['format', '2.0.0'],
    ]) {
      const files = [{ path: 'SKILL.md', content: `---\nname: ${slug}\ndescription: ${slug} things\n---\n` }];
      await json(
        await server.request('PUT', `/v2/skills/acme/${slug}/versions/${version}`, {
          body: { files, public: true },
        }),
        201,
      );
    }
  });
  afterAll(() => server.close());

  let titles = 0;
  /** A fresh agent with one of each spec component; its title is fixed so its spec can be re-sent. */
  async function newAgent(overrides: Record<string, unknown> = {}) {
    const spec = {
      title: `agent ${++titles}`,
      instructions: 'Be brief.',
      skills: [{ source: 'registry:acme/lint@1.2.0' }],
      mcp_servers: [{ name: 'docs', url: 'https://mcp.example.com/docs' }],
      ...overrides,
    };
    return { ...(await createAgent(server, spec)), spec };
  }
  const manifestOf = async (agentId: string) =>
    json<Manifest>(await cli('GET', `/agents/${agentId}/manifest`), 200);
  const revisionOf = async (agentId: string) =>
    (await json<{ revision: string }>(await cli('GET', `/agents/${agentId}/revision`), 200)).revision;
  const put = (agentId: string, body: unknown, token?: string) =>
    cli('PUT', `/agents/${agentId}/manifest`, { body, token });
  const agentRow = (agentId: string) =>
    server.paddock.services.store.db
      .selectFrom('agents')
      .selectAll()
      .where('id', '=', agentId)
      .executeTakeFirstOrThrow();
  const componentRows = (agentId: string) =>
    server.paddock.services.store.db
      .selectFrom('agent_components')
      .select(['kind', 'name', 'status', 'hash', 'updated_at'])
      .where('agent_id', '=', agentId)
      .orderBy('kind')
      .orderBy('name')
      .execute();

  it('shows the runtime spec as components with their files and content hashes, and the revision', async () => {
    const { agent_id } = await newAgent({
      mcp_servers: [
        { name: 'docs', url: 'https://mcp.example.com/docs' },
        { name: 'local', command: 'npx', args: ['-y', 'some-server'], env: { LEVEL: 'debug' } },
      ],
    });
    const manifest = await manifestOf(agent_id);
    expect(manifest.agent_id).toBe(agent_id);
    expect(manifest.revision).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.revision).toBe(await revisionOf(agent_id));
    expect(manifest).not.toHaveProperty('warnings');
    expect(manifest.components.map(({ type, name, files }) => ({ type, name, files }))).toEqual([
      instructions('Be brief.'),
      skill('registry:acme/lint@1.2.0'),
      mcpServer('docs', { url: 'https://mcp.example.com/docs' }),
      // Env and header values are secrets: a manifest names them only (issue 10 §5).
      mcpServer('local', { command: 'npx', args: ['-y', 'some-server'], env_names: ['LEVEL'] }),
    ]);
    // The hash is SHA-256 of the canonical JSON of type, name and files (documented in decisions.md).
    const [first] = manifest.components;
    const canonical = `{"files":[{"content":"Be brief.","path":"instructions.md"}],"name":"instructions","type":"instructions"}`;
    expect(first.hash).toBe(createHash('sha256').update(canonical).digest('hex'));
  });

  it('publishes: present components are written to the runtime spec, absent ones unlinked; new threads run them', async () => {
    const { agent_id, spec } = await newAgent();
    const before = await agentRow(agent_id);
    const published = await json<Manifest>(
      await put(agent_id, {
        components: [
          instructions('Answer in French. MARKER-7731'),
          skill('registry:acme/format@2.0.0'),
          mcpServer('search', { url: 'https://mcp.example.com/search', headers: { 'x-team': 'blue' } }),
        ],
      }),
      200,
    );
    expect(published.components.map((c) => `${c.type}:${c.name}`)).toEqual([
      'instructions:instructions',
      'skill:acme/format',
      'mcp_server:search',
    ]);
    expect(published.revision).toBe(await revisionOf(agent_id));
    expect(await manifestOf(agent_id)).toEqual(published);

    // The agent's columns are the runtime's source: rewritten, and the spec hash recomputed as PATCH does.
    const after = await agentRow(agent_id);
    expect(after.instructions).toBe('Answer in French. MARKER-7731');
    expect(JSON.parse(after.skills)).toEqual([{ source: 'registry:acme/format@2.0.0' }]);
    expect(JSON.parse(after.mcp_servers)).toEqual([
      {
        name: 'search',
        url: 'https://mcp.example.com/search',
        headers: { 'x-team': { sealed: expect.any(String) } },
      },
    ]);
    expect(after.spec_hash).not.toBe(before.spec_hash);
    // Sending the new spec through the public API finds this very agent (D4: same spec, same agent).
    const again = await createAgent(server, {
      ...spec,
      instructions: 'Answer in French. MARKER-7731',
      skills: [{ source: 'registry:acme/format@2.0.0' }],
      mcp_servers: [{ name: 'search', url: 'https://mcp.example.com/search', headers: { 'x-team': 'blue' } }],
    });
    expect(again.agent_id).toBe(agent_id);

    // A new thread's turn runs the new instructions: the scripted model's `::expect` looks for the
    // marker in what it was sent before the user's message (the system prompt).
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent_id, input: '::expect MARKER-7731' } }),
      201,
    );
    await settled(server, thread_id);
    const call = (await allEvents(server, thread_id)).find(
      (e) => e.type === 'tool_call.start' && (e.data as { name?: string }).name === 'report_verdict',
    );
    expect((call!.data as { input: { passed: boolean } }).input.passed).toBe(true);

    // An empty manifest unlinks them all: no instructions, no skills, no MCP servers.
    const emptied = await json<Manifest>(await put(agent_id, { components: [] }), 200);
    expect(emptied.components).toEqual([]);
    const cleared = await agentRow(agent_id);
    expect([cleared.instructions, cleared.skills, cleared.mcp_servers]).toEqual([null, '[]', '[]']);
  });

  it('round-trips: a manifest sent back as read changes nothing, hashes and revision included', async () => {
    const { agent_id } = await newAgent();
    await json(
      await put(agent_id, {
        components: [...asPublished((await manifestOf(agent_id)).components), playbook('triage')],
      }),
      200,
    );
    const read = await manifestOf(agent_id);
    const rowsBefore = await componentRows(agent_id);
    const again = await json<Manifest>(
      // As read, hashes and statuses included: the server recomputes them.
      await put(agent_id, { components: read.components, base_revision: read.revision }),
      200,
    );
    expect(again).toEqual(read);
    expect(await componentRows(agent_id)).toEqual(rowsBefore);
  });

  it('keeps playbooks and evals the manifest omits unless the client reconciles that type', async () => {
    const { agent_id } = await newAgent();
    await json(
      await put(agent_id, {
        components: [
          instructions('Be brief.'),
          playbook('triage'),
          playbook('release'),
          evalComponent('tone'),
          evalComponent('accuracy'),
        ],
      }),
      200,
    );
    // Omitted without a flag: the client does not model them; nothing is archived.
    let manifest = await json<Manifest>(
      await put(agent_id, { components: [instructions('Be brief.')] }),
      200,
    );
    expect(manifest.components.map((c) => `${c.type}:${c.name}:${c.status ?? ''}`)).toEqual([
      'instructions:instructions:',
      'playbook:release:active',
      'playbook:triage:active',
      'eval:accuracy:active',
      'eval:tone:active',
    ]);

    // reconcile_playbooks archives the playbooks left out, and nothing else.
    manifest = await json<Manifest>(
      await put(agent_id, { components: [playbook('triage', '# triage v2\n')], reconcile_playbooks: true }),
      200,
    );
    expect(manifest.components.map((c) => `${c.type}:${c.name}`)).toEqual([
      'playbook:triage',
      'eval:accuracy',
      'eval:tone',
    ]);
    expect(await componentRows(agent_id)).toEqual([
      expect.objectContaining({ kind: 'eval', name: 'accuracy', status: 'active' }),
      expect.objectContaining({ kind: 'eval', name: 'tone', status: 'active' }),
      expect.objectContaining({ kind: 'playbook', name: 'release', status: 'archived' }),
      expect.objectContaining({ kind: 'playbook', name: 'triage', status: 'active' }),
    ]);

    // reconcile_evals needs base_revision: 400, and nothing changes.
    const revision = manifest.revision;
    const refused = await put(agent_id, { components: [], reconcile_evals: true });
    expect((await json<{ detail: { code: string } }>(refused, 400)).detail.code).toBe(
      'base_revision_required',
    );
    expect(await revisionOf(agent_id)).toBe(revision);
    expect(await manifestOf(agent_id)).toEqual(manifest);

    manifest = await json<Manifest>(
      await put(agent_id, {
        components: [playbook('triage', '# triage v2\n'), evalComponent('tone')],
        reconcile_evals: true,
        base_revision: revision,
      }),
      200,
    );
    expect(manifest.components.map((c) => `${c.type}:${c.name}`)).toEqual(['playbook:triage', 'eval:tone']);
    const evals = await json<{ items: { name: string; status: string }[] }>(
      await cli('GET', `/agents/${agent_id}/evals?include_archived=true`),
      200,
    );
    expect(evals.items.map((e) => `${e.name}:${e.status}`)).toEqual(['accuracy:archived', 'tone:active']);

    // Published again, an archived playbook is active again, with its new content; `status:
    // archived` on a component archives it explicitly.
    manifest = await json<Manifest>(
      await put(agent_id, {
        components: [
          playbook('release', '# release v2\n'),
          { ...playbook('triage', '# triage v2\n'), status: 'archived' },
        ],
      }),
      200,
    );
    expect(manifest.components.map((c) => `${c.type}:${c.name}`)).toEqual(['playbook:release', 'eval:tone']);
    expect(manifest.components[0].files).toEqual([{ path: 'playbook.md', content: '# release v2\n' }]);
  });

  it('refuses a stale base_revision with 409 and the current revision, writing nothing', async () => {
    const { agent_id } = await newAgent();
    const stale = await revisionOf(agent_id);
    await json(await put(agent_id, { components: [instructions('Moved on.')], base_revision: stale }), 200);
    const current = await manifestOf(agent_id);
    expect(current.revision).not.toBe(stale);
    const refused = await put(agent_id, {
      components: [instructions('Late edit.'), playbook('late')],
      base_revision: stale,
    });
    const { detail } = await json<{ detail: Record<string, string> }>(refused, 409);
    expect(detail).toEqual({
      code: 'base_revision_conflict',
      message: expect.stringContaining('pull'),
      base_revision: stale,
      current_revision: current.revision,
    });
    expect(await manifestOf(agent_id)).toEqual(current);
    expect(await componentRows(agent_id)).toEqual([]);
  });

  it('lets exactly one of two concurrent publishes from the same base_revision win', async () => {
    for (let round = 0; round < 5; round++) {
      const { agent_id } = await newAgent();
      const base = await revisionOf(agent_id);
      const answers = await Promise.all(
        ['a', 'b'].map((side) =>
          put(agent_id, {
            components: [instructions(`side ${side}`), playbook(`only-${side}`)],
            base_revision: base,
          }),
        ),
      );
      const statuses = answers.map((a) => a.status).sort();
      expect(statuses).toEqual([200, 409]);
      const winner = answers.findIndex((a) => a.status === 200) === 0 ? 'a' : 'b';
      const manifest = await manifestOf(agent_id);
      // The winner's manifest whole, and nothing of the loser's.
      expect(manifest.components.map((c) => `${c.type}:${c.name}`)).toEqual([
        'instructions:instructions',
        `playbook:only-${winner}`,
      ]);
      expect(manifest.components[0].files[0].content).toBe(`side ${winner}`);
      const loser = answers.find((a) => a.status === 409)!;
      expect((await loser.json()).detail.current_revision).toBe(manifest.revision);
    }
  });

  it('is atomic: a publish that fails part-way (its spec clashes with another agent) leaves nothing written', async () => {
    const { agent_id, spec } = await newAgent();
    // A second agent of the team with the same title, whose spec this publish would reproduce.
    const twin = await createAgent(server, { ...spec, instructions: 'Twin.', skills: [], mcp_servers: [] });
    expect(twin.agent_id).not.toBe(agent_id);
    const before = await manifestOf(agent_id);
    const refused = await put(agent_id, {
      components: [instructions('Twin.'), playbook('written-first'), evalComponent('written-first')],
    });
    expect((await json<{ detail: { code: string } }>(refused, 409)).detail.code).toBe('conflict');
    expect(await manifestOf(agent_id)).toEqual(before);
    expect(await componentRows(agent_id)).toEqual([]);
  });

  it('warns about content it cannot represent, and leaves that content as it was', async () => {
    const { agent_id } = await newAgent({
      mcp_servers: [
        { name: 'docs', url: 'https://mcp.example.com/docs' },
        { name: 'files', command: 'mcp-files' },
      ],
    });
    const published = await json<Manifest>(
      await put(agent_id, {
        components: [
          // Two files: instructions are one string at runtime.
          {
            type: 'instructions',
            name: 'instructions',
            files: [
              { path: 'instructions.md', content: 'a' },
              { path: 'more.md', content: 'b' },
            ],
          },
          // A skill's own files without a version (nor front matter) cannot be published: the existing one is kept.
          { type: 'skill', name: 'acme/lint', files: [{ path: 'SKILL.md', content: '# Lint\n' }] },
          { type: 'skill', name: 'me/new-local', files: [{ path: 'SKILL.md', content: '# Mine\n' }] },
          // Not JSON, and JSON that is no server config (both url and command).
          { type: 'mcp_server', name: 'docs', files: [{ path: 'server.json', content: '{not json' }] },
          mcpServer('files', { url: 'https://x.example.com', command: 'also' }),
          mcpServer('fresh', { url: 'https://fresh.example.com/mcp' }),
          // A type this server does not know.
          { type: 'hook', name: 'pre-commit', files: [{ path: 'hook.sh', content: 'true' }] },
          playbook('fine'),
        ],
      }),
      200,
    );
    expect(published.warnings?.map((w) => `${w.type}:${w.name}:${w.code}`)).toEqual([
      'instructions:instructions:invalid_instructions',
      'skill:acme/lint:skill_version_missing',
      'skill:me/new-local:skill_version_missing',
      'mcp_server:docs:invalid_mcp_server',
      'mcp_server:files:invalid_mcp_server',
      'hook:pre-commit:unsupported_type',
    ]);
    expect(published.warnings?.every((w) => w.message.length > 0)).toBe(true);
    const row = await agentRow(agent_id);
    expect(row.instructions).toBe('Be brief.');
    expect(JSON.parse(row.skills)).toEqual([{ source: 'registry:acme/lint@1.2.0' }]);
    expect(JSON.parse(row.mcp_servers)).toEqual([
      { name: 'docs', url: 'https://mcp.example.com/docs' },
      { name: 'files', command: 'mcp-files' },
      { name: 'fresh', url: 'https://fresh.example.com/mcp' },
    ]);
    expect(published.components.map((c) => `${c.type}:${c.name}`)).toEqual([
      'instructions:instructions',
      'skill:acme/lint',
      'mcp_server:docs',
      'mcp_server:files',
      'mcp_server:fresh',
      'playbook:fine',
    ]);
    // A read shows no warnings: what is stored is representable.
    expect(await manifestOf(agent_id)).not.toHaveProperty('warnings');
  });

  it('warns on a read when the spec holds a name twice (possible through the public API)', async () => {
    const { agent_id } = await newAgent({
      mcp_servers: [
        { name: 'docs', url: 'https://one.example.com' },
        { name: 'docs', url: 'https://two.example.com' },
      ],
    });
    const manifest = await manifestOf(agent_id);
    expect(manifest.components.filter((c) => c.type === 'mcp_server')).toHaveLength(1);
    expect(manifest.warnings).toEqual([
      expect.objectContaining({ type: 'mcp_server', name: 'docs', code: 'duplicate_name' }),
    ]);
  });

  it('validates the body: duplicate names and files, escaping paths, missing components (422)', async () => {
    const { agent_id } = await newAgent();
    const before = await revisionOf(agent_id);
    for (const body of [
      { components: [playbook('x'), playbook('x')] },
      { components: [{ type: 'playbook', name: 'x', files: [{ path: '../etc/passwd', content: '' }] }] },
      { components: [{ type: 'playbook', name: 'x', files: [{ path: '/abs', content: '' }] }] },
      {
        components: [
          {
            type: 'playbook',
            name: 'x',
            files: [
              { path: 'a.md', content: '' },
              { path: 'a.md', content: '' },
            ],
          },
        ],
      },
      { components: [instructions('a'), { ...instructions('b'), name: 'other' }] },
      {},
      { components: [], reconcile_evals: 'yes' },
      { components: [], extra: 1 },
    ]) {
      await json(await put(agent_id, body), 422);
    }
    expect(await revisionOf(agent_id)).toBe(before);
  });

  it('moves the revision with instructions, skills, MCP servers, active playbooks and evals, and secret key names only', async () => {
    const { agent_id } = await newAgent({ secrets: { API_KEY: 'one' } });
    const base = [
      instructions('Be brief.'),
      skill('registry:acme/lint@1.2.0'),
      mcpServer('docs', { url: 'https://mcp.example.com/docs' }),
    ];
    await json(await put(agent_id, { components: [...base, playbook('p'), evalComponent('e')] }), 200);
    let revision = await revisionOf(agent_id);
    const moves = async (change: () => Promise<unknown>) => {
      await change();
      const next = await revisionOf(agent_id);
      const moved = next !== revision;
      revision = next;
      return moved;
    };
    const publish =
      (components: unknown[], flags: Record<string, unknown> = {}) =>
      async () =>
        json(await put(agent_id, { components, ...flags }), 200);
    const patch = (body: unknown) => async () =>
      json(await server.request('PATCH', `/v2/agents/${agent_id}`, { body }), 200);

    expect(await moves(publish([instructions('Be terse.'), ...base.slice(1)]))).toBe(true);
    expect(await moves(publish(base))).toBe(true);
    expect(await moves(publish([base[0], skill('registry:acme/lint@1.3.0'), base[2]]))).toBe(true);
    expect(await moves(publish(base))).toBe(true);
    expect(await moves(publish([...base, mcpServer('more', { command: 'more' })]))).toBe(true);
    expect(await moves(publish(base))).toBe(true);
    // Playbooks and evals: added, changed, archived.
    expect(await moves(publish([...base, playbook('p', 'changed')]))).toBe(true);
    expect(await moves(publish([...base, playbook('q')]))).toBe(true);
    expect(await moves(publish([...base, evalComponent('e', 'stricter')]))).toBe(true);
    expect(
      await moves(publish([...base, playbook('p', 'changed'), playbook('q')], { reconcile_playbooks: true })),
    ).toBe(false);
    expect(await moves(publish([...base, playbook('q')], { reconcile_playbooks: true }))).toBe(true);
    // An archived playbook's content is not covered: changing it while archived moves nothing.
    expect(
      await moves(publish([...base, { ...playbook('p', 'edited while archived'), status: 'archived' }])),
    ).toBe(false);
    // Secrets: a key added or removed moves it; a changed value does not.
    expect(await moves(patch({ secrets: { API_KEY: 'two' } }))).toBe(false);
    expect(await moves(patch({ secrets: { API_KEY: 'two', OTHER: 'x' } }))).toBe(true);
    expect(await moves(patch({ secrets: { API_KEY: 'two' } }))).toBe(true);
    // Fields outside the manifest do not move it.
    expect(await moves(patch({ model: 'scripted', title: 'renamed', entrypoint: 'true' }))).toBe(false);
    // The same content again gives the same revision: it is a digest of the content.
    expect(await moves(publish([...base, playbook('q')]))).toBe(false);
  });

  it('answers 401 without a token, 403 to a read-only token on publish (changing nothing), 404 for an agent out of reach', async () => {
    const { agent_id } = await newAgent();
    const paths = [
      ['GET', `/agents/${agent_id}/manifest`],
      ['PUT', `/agents/${agent_id}/manifest`],
      ['GET', `/agents/${agent_id}/revision`],
    ] as const;
    const body = { components: [instructions('hijacked'), playbook('x')] };
    for (const [method, path] of paths) {
      const refused = await cli(method, path, { token: null, body: method === 'PUT' ? body : undefined });
      expect((await json<{ detail: string }>(refused, 401)).detail).toBe('missing bearer token');
    }

    const before = await manifestOf(agent_id);
    for (const scopes of [['read'], ['admin'], ['read', 'admin']] as const) {
      const token = await adminTokenWith(server, [...scopes]);
      await json(await cli('GET', `/agents/${agent_id}/manifest`, { token }), 200);
      await json(await cli('GET', `/agents/${agent_id}/revision`, { token }), 200);
      const refused = await put(agent_id, body, token);
      expect((await json<{ detail: string }>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
    }
    expect(await manifestOf(agent_id)).toEqual(before);
    expect(await componentRows(agent_id)).toEqual([]);

    // Another organization's agent, and one that does not exist, look alike.
    const outsider = (await strangerToken(server)).token;
    const theirs = await createAgent(server, { instructions: 'theirs' }, outsider);
    await json(await cli('GET', `/agents/${theirs.agent_id}/manifest`, { token: outsider }), 200);
    for (const id of [theirs.agent_id, '0190c3c8-7a86-7000-8000-000000000000']) {
      for (const [method, path] of [
        ['GET', `/agents/${id}/manifest`],
        ['PUT', `/agents/${id}/manifest`],
        ['GET', `/agents/${id}/revision`],
      ] as const) {
        const answer = await cli(method, path, { body: method === 'PUT' ? body : undefined });
        expect((await json<{ detail: string }>(answer, 404)).detail).toBe('Agent not found');
      }
    }
    const theirs2 = await json<Manifest>(
      await cli('GET', `/agents/${theirs.agent_id}/manifest`, { token: outsider }),
      200,
    );
    expect(theirs2.components.map((c) => c.files[0].content)).toEqual(['theirs']);

    // An agent key reaches its own agent only; resource-bound credentials are admitted here (spec
    // Authentication 12: only team listing and orchestrations refuse them).
    const key = await json<{ key: string }>(await cli('POST', `/agents/${agent_id}/keys`, { body: {} }), 201);
    const other = await newAgent();
    await json(await cli('GET', `/agents/${agent_id}/manifest`, { token: key.key }), 200);
    expect(
      (
        await json<{ detail: string }>(
          await cli('GET', `/agents/${other.agent_id}/revision`, { token: key.key }),
          404,
        )
      ).detail,
    ).toBe('Agent not found');
    await json(await put(agent_id, { components: asPublished(before.components) }, key.key), 200);
    await json(await put(other.agent_id, { components: [] }, key.key), 404);

    // The same router under /api/cli; an unrouted path is a plain 404.
    const viaApi = await json<Manifest>(
      await server.request('GET', `/api/cli/agents/${agent_id}/manifest`),
      200,
    );
    expect(viaApi).toEqual(before);
    expect(
      (await json<{ detail: string }>(await cli('GET', `/agents/${agent_id}/manifestx`), 404)).detail,
    ).toBe('Not Found');
  });
});
