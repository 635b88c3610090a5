import { mintToken } from '@paddock/core';
import { findFirstTeam } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startInjectedServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { strangerToken } from './control-plane-helpers.ts';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

interface Orchestration {
  id: string;
  team_id: string;
  name: string;
  revision: string;
  members: { agent_id: string; role: string | null; manifest?: Record<string, unknown> }[];
  edges: { from: string; to: string }[];
  created_at: string;
  updated_at: string;
}

const absent = '0190c3c8-7a86-7000-8000-000000000000';

describe.each(testDatabases())('orchestrations on $name', (database) => {
  let server: TestServer;
  let teamId: string;
  let orgId: string;
  let readOnly: string;
  let stranger: { token: string; teamId: string; orgId: string };
  let strangerAgent: string;

  beforeAll(async () => {
    server = await startInjectedServer(database);
    const team = (await findFirstTeam(server.paddock.services.store.db))!;
    teamId = team.id;
    orgId = team.org_id;
    readOnly = await adminTokenWith(server, ['read']);
    stranger = await strangerToken(server);
    strangerAgent = (await createAgent(stranger.token)).agent_id;
  });
  afterAll(() => server.close());

  const cli = (method: string, path: string, options: { body?: unknown; token?: string | null } = {}) =>
    server.request(method, `/v2/cli${path}`, options);
  async function createAgent(token?: string) {
    return json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: `orchestrated ${crypto.randomUUID()}` }) },
        token,
      }),
      201,
    );
  }
  const agents = async (n: number) =>
    Promise.all(Array.from({ length: n }, async () => (await createAgent()).agent_id));
  const publish = async (body: Record<string, unknown>) =>
    json<Orchestration>(await cli('POST', '/orchestrations', { body: { team_id: teamId, ...body } }), 201);
  const countRows = async () => {
    const { db } = server.paddock.services.store;
    const [o, m, e] = await Promise.all([
      db.selectFrom('orchestrations').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
      db
        .selectFrom('orchestration_members')
        .select(db.fn.countAll<string>().as('n'))
        .executeTakeFirstOrThrow(),
      db.selectFrom('orchestration_edges').select(db.fn.countAll<string>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return [Number(o.n), Number(m.n), Number(e.n)];
  };

  it('publishes an orchestration and reads it back: by id, in the team listing, and with member manifests', async () => {
    const [a, b, c] = await agents(3);
    const created = await publish({
      name: 'pipeline',
      members: [{ agent_id: a, role: 'lead' }, { agent_id: b }, { agent_id: c, role: 'reviewer' }],
      edges: [
        { from: a, to: b },
        { from: b, to: c },
      ],
    });
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      team_id: teamId,
      name: 'pipeline',
      revision: expect.stringMatching(/^[0-9a-f]{64}$/),
      members: [
        { agent_id: a, role: 'lead' },
        { agent_id: b, role: null },
        { agent_id: c, role: 'reviewer' },
      ],
      edges: [
        { from: a, to: b },
        { from: b, to: c },
      ],
      created_at: expect.any(String),
      updated_at: created.created_at,
    });
    expect(await json<Orchestration>(await cli('GET', `/orchestrations/${created.id}`), 200)).toEqual(
      created,
    );

    const later = await publish({ name: 'empty' });
    expect(later).toMatchObject({ members: [], edges: [] });
    const listed = await json<{ items: Orchestration[] }>(
      await cli('GET', `/orgs/${orgId}/teams/${teamId}/orchestrations`),
      200,
    );
    const ids = listed.items.map((o) => o.id);
    expect(ids.indexOf(later.id)).toBeLessThan(ids.indexOf(created.id));
    expect(listed.items.find((o) => o.id === created.id)).toEqual(created);

    const withManifests = await json<Orchestration>(
      await cli('GET', `/orchestrations/${created.id}/manifest`),
      200,
    );
    expect({ ...withManifests, members: withManifests.members.map(({ manifest: _, ...m }) => m) }).toEqual(
      created,
    );
    // Each member inlines exactly the manifest its agent's own manifest route answers.
    for (const member of withManifests.members) {
      const own = await json(await cli('GET', `/agents/${member.agent_id}/manifest`), 200);
      expect(member.manifest).toEqual(own);
    }
    expect(withManifests.members[0]!.manifest).toMatchObject({
      agent_id: a,
      components: [expect.objectContaining({ type: 'instructions' })],
    });
    expect(created.members.every((m) => !('manifest' in m))).toBe(true);
  });

  it('refuses a member without access to the team, and edges that do not join two members (400, nothing written)', async () => {
    const [a, b] = await agents(2);
    const before = await countRows();
    for (const [body, code] of [
      [{ members: [{ agent_id: a }, { agent_id: strangerAgent }] }, 'orchestration_member_denied'],
      [{ members: [{ agent_id: absent }] }, 'orchestration_member_denied'],
      [{ members: [{ agent_id: a }], edges: [{ from: a, to: b }] }, 'invalid_orchestration_edge'],
      [
        { members: [{ agent_id: a }, { agent_id: b }], edges: [{ from: a, to: a }] },
        'invalid_orchestration_edge',
      ],
    ] as const) {
      const refused = await cli('POST', '/orchestrations', { body: { team_id: teamId, name: 'x', ...body } });
      expect((await json<{ detail: { code: string; message: string } }>(refused, 400)).detail.code).toBe(
        code,
      );
    }
    const denied = await cli('POST', '/orchestrations', {
      body: { team_id: teamId, name: 'x', members: [{ agent_id: strangerAgent }] },
    });
    expect((await json<{ detail: { message: string } }>(denied, 400)).detail.message).toBe(
      `agent ${strangerAgent} does not have access to team ${teamId}`,
    );
    // Body validation (D3): 422.
    for (const body of [
      { team_id: teamId, name: 'x', members: [{ agent_id: a }, { agent_id: a }] },
      { team_id: teamId, name: '' },
      { team_id: teamId, name: 'x', members: [{ agent_id: 'nope' }] },
      { team_id: teamId, name: 'x', extra: true },
      { name: 'x' },
    ])
      await json(await cli('POST', '/orchestrations', { body }), 422);
    // A team the caller is not in, or none at all.
    for (const team of [stranger.teamId, absent]) {
      const refused = await cli('POST', '/orchestrations', { body: { team_id: team, name: 'x' } });
      expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Team not found');
    }
    expect(await countRows()).toEqual(before);
  });

  it('updates partially: members and edges replaced whole when given, kept when omitted, cleared with []', async () => {
    const [a, b, c] = await agents(3);
    const created = await publish({
      name: 'v1',
      members: [{ agent_id: a }, { agent_id: b }],
      edges: [{ from: a, to: b }],
    });
    const put = (body: Record<string, unknown>, status = 200) =>
      cli('PUT', `/orchestrations/${created.id}`, { body }).then((r) => json<Orchestration>(r, status));

    const renamed = await put({ name: 'v2' });
    expect(renamed).toMatchObject({ name: 'v2', members: created.members, edges: created.edges });
    expect(renamed.revision).not.toBe(created.revision);
    expect(renamed.updated_at >= created.updated_at).toBe(true);

    // Declaring the same graph in another order is not a change.
    const reordered = await put({ members: [{ agent_id: b }, { agent_id: a }] });
    expect(reordered.revision).toBe(renamed.revision);
    expect(reordered.members.map((m) => m.agent_id)).toEqual([b, a]);
    expect(reordered.edges).toEqual([{ from: a, to: b }]);

    const grown = await put({
      members: [{ agent_id: a }, { agent_id: b }, { agent_id: c, role: 'qa' }],
      edges: [
        { from: a, to: b },
        { from: c, to: a },
      ],
    });
    expect(grown.members).toHaveLength(3);
    expect(grown.edges).toHaveLength(2);

    // Kept edges must still join members: dropping c while its edge stays is a 400, nothing written.
    const refused = await cli('PUT', `/orchestrations/${created.id}`, {
      body: { members: [{ agent_id: a }, { agent_id: b }] },
    });
    expect((await json<{ detail: { code: string } }>(refused, 400)).detail.code).toBe(
      'invalid_orchestration_edge',
    );
    const memberRefused = await cli('PUT', `/orchestrations/${created.id}`, {
      body: { members: [{ agent_id: a }, { agent_id: strangerAgent }], edges: [] },
    });
    expect((await json<{ detail: { code: string } }>(memberRefused, 400)).detail.code).toBe(
      'orchestration_member_denied',
    );
    expect(await json<Orchestration>(await cli('GET', `/orchestrations/${created.id}`), 200)).toEqual(grown);

    const noEdges = await put({ edges: [] });
    expect(noEdges).toMatchObject({ members: grown.members, edges: [] });
    const cleared = await put({ members: [] });
    expect(cleared).toMatchObject({ name: 'v2', members: [], edges: [] });
    await json(await cli('PUT', `/orchestrations/${created.id}`, { body: { team_id: teamId } }), 422);
  });

  it('refuses a write on a stale base_revision with 409 and writes nothing', async () => {
    const [a, b] = await agents(2);
    const created = await publish({ name: 'guarded', members: [{ agent_id: a }] });
    const moved = await json<Orchestration>(
      await cli('PUT', `/orchestrations/${created.id}`, {
        body: { base_revision: created.revision, members: [{ agent_id: a }, { agent_id: b }] },
      }),
      200,
    );
    const stale = await cli('PUT', `/orchestrations/${created.id}`, {
      body: { base_revision: created.revision, name: 'lost update' },
    });
    const conflict = await json<{ detail: { code: string; message: string; current_revision: string } }>(
      stale,
      409,
    );
    expect(conflict.detail).toMatchObject({ code: 'conflict', current_revision: moved.revision });
    expect(conflict.detail.message).toContain('base_revision');
    expect(await json<Orchestration>(await cli('GET', `/orchestrations/${created.id}`), 200)).toEqual(moved);
  });

  it('answers 404 for orchestrations and teams out of reach, and 401 without a credential', async () => {
    const mine = await publish({ name: 'mine' });
    const theirs = await json<Orchestration>(
      await cli('POST', '/orchestrations', {
        body: { team_id: stranger.teamId, name: 'theirs' },
        token: stranger.token,
      }),
      201,
    );
    for (const [id, token] of [
      [absent, undefined],
      [theirs.id, undefined],
      [mine.id, stranger.token],
    ] as const) {
      for (const [method, path, body] of [
        ['GET', `/orchestrations/${id}`, undefined],
        ['GET', `/orchestrations/${id}/manifest`, undefined],
        ['PUT', `/orchestrations/${id}`, { name: 'taken' }],
      ] as const) {
        const refused = await cli(method, path, { body, token });
        expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Orchestration not found');
      }
    }
    for (const [org, team, token] of [
      [orgId, stranger.teamId, undefined],
      [stranger.orgId, stranger.teamId, undefined],
      [stranger.orgId, teamId, undefined],
      [orgId, teamId, stranger.token],
      [orgId, absent, undefined],
    ] as const) {
      const refused = await cli('GET', `/orgs/${org}/teams/${team}/orchestrations`, { token });
      expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Team not found');
    }
    const theirList = await json<{ items: Orchestration[] }>(
      await cli('GET', `/orgs/${stranger.orgId}/teams/${stranger.teamId}/orchestrations`, {
        token: stranger.token,
      }),
      200,
    );
    expect(theirList.items.map((o) => o.id)).toEqual([theirs.id]);

    for (const [method, path] of fiveRoutes(mine.id)) {
      const refused = await cli(method, path, { token: null, body: method === 'GET' ? undefined : {} });
      expect((await json<{ detail: string }>(refused, 401)).detail).toBe('missing bearer token');
    }
  });

  it('refuses a read-only token on both writes before anything runs; reads need no scope; sessions pass', async () => {
    const [a] = await agents(1);
    const created = await publish({ name: 'scoped', members: [{ agent_id: a }] });
    const before = await countRows();
    for (const token of [readOnly, await adminTokenWith(server, ['admin'])]) {
      const post = await cli('POST', '/orchestrations', { body: { team_id: teamId, name: 'nope' }, token });
      expect((await json<{ detail: string }>(post, 403)).detail).toBe('PAT lacks required scope: publish');
      const put = await cli('PUT', `/orchestrations/${created.id}`, {
        body: { name: 'nope', members: [] },
        token,
      });
      expect((await json<{ detail: string }>(put, 403)).detail).toBe('PAT lacks required scope: publish');
    }
    expect(await countRows()).toEqual(before);
    expect(await json<Orchestration>(await cli('GET', `/orchestrations/${created.id}`), 200)).toEqual(
      created,
    );
    for (const [method, path] of fiveRoutes(created.id, orgId, teamId).filter(([m]) => m === 'GET'))
      await json(await cli(method, path, { token: readOnly }), 200);

    const { access_token } = await json<{ access_token: string }>(
      await server.request('POST', '/v2/auth/login', {
        body: { username: 'admin', password: 'test-password' },
        token: null,
      }),
      200,
    );
    const renamed = await json<Orchestration>(
      await cli('PUT', `/orchestrations/${created.id}`, {
        body: { name: 'by session' },
        token: access_token,
      }),
      200,
    );
    expect(renamed.name).toBe('by session');
  });

  it('refuses agent keys and thread-bound tokens on all five routes with a string detail naming the binding', async () => {
    const { agent_id, thread_id } = await createAgent();
    const created = await publish({ name: 'bound', members: [{ agent_id }] });
    const agentKey = await json<{ key: string }>(
      await cli('POST', `/agents/${agent_id}/keys`, { body: {} }),
      201,
    );
    const admin = await server.paddock.services.store.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    const threadToken = await mintToken(server.paddock.services.store.db, {
      kind: 'thread',
      userId: admin.id,
      name: 'sandbox',
      scopes: ['read', 'publish'],
      threadId: thread_id,
    });
    const before = await countRows();
    for (const [token, named] of [
      [agentKey.key, `agent-scoped credential (bound to agent ${agent_id})`],
      [threadToken.token, `thread-scoped credential (bound to thread ${thread_id})`],
    ] as const) {
      for (const [method, path] of fiveRoutes(created.id, orgId, teamId)) {
        const body =
          method === 'POST'
            ? { team_id: teamId, name: 'bound', members: [{ agent_id }] }
            : method === 'PUT'
              ? { name: 'bound-changed' }
              : undefined;
        const refused = await cli(method, path, { token, body });
        const detail = (await json<{ detail: unknown }>(refused, 403)).detail;
        expect(typeof detail).toBe('string');
        expect(detail).toBe(`${named} cannot use orchestration endpoints`);
      }
    }
    expect(await countRows()).toEqual(before);
  });

  it('lets an agent-bound key reach the agents it shares an edge with, either way, and no other', async () => {
    const [a, b, c, d] = await agents(4);
    const created = await publish({
      name: 'peers',
      members: [{ agent_id: a }, { agent_id: b }, { agent_id: c }, { agent_id: d }],
      edges: [{ from: a, to: b }],
    });
    const keyOf = async (agentId: string) =>
      (await json<{ key: string }>(await cli('POST', `/agents/${agentId}/keys`, { body: {} }), 201)).key;
    const [keyA, keyB, keyC] = [await keyOf(a), await keyOf(b), await keyOf(c)];
    const reads = async (token: string, agentId: string) => {
      const response = await cli('GET', `/agents/${agentId}/mcp-servers`, { token });
      if (response.status === 404)
        expect((await json<{ detail: string }>(response, 404)).detail).toBe('Agent not found');
      else await json(response, 200);
      return response.status;
    };
    expect(await reads(keyA, b)).toBe(200);
    expect(await reads(keyB, a)).toBe(200);
    expect(await reads(keyA, c)).toBe(404);
    expect(await reads(keyC, a)).toBe(404);
    expect(await reads(keyC, d)).toBe(404);
    // Peers through the public surface too: a's key starts a thread of b, and lists b's keys.
    const peerThread = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent_id: b }, token: keyA }),
      201,
    );
    await json(await server.request('GET', `/v2/threads/${peerThread.thread_id}`, { token: keyA }), 200);
    const peerKeys = await json<{ items: { agent_id: string }[] }>(
      await cli('GET', `/agents/${b}/keys`, { token: keyA }),
      200,
    );
    expect(peerKeys.items.map((k) => k.agent_id)).toEqual([b]);
    // Reaching a peer does not make its keys a's: no minting one (which would reach b's own peers),
    // no revoking one.
    const minted = await cli('POST', `/agents/${b}/keys`, { body: {}, token: keyA });
    expect((await json<{ detail: { code: string } }>(minted, 403)).detail.code).toBe(
      'credential_scope_denied',
    );
    const [bKey] = (await json<{ items: { id: string }[] }>(await cli('GET', `/agents/${b}/keys`), 200))
      .items;
    const revoked = await cli('DELETE', `/keys/${bKey!.id}`, { token: keyA });
    expect((await json<{ detail: string }>(revoked, 404)).detail).toBe('Key not found');
    const stillListed = await json<{ items: { id: string }[] }>(await cli('GET', `/agents/${b}/keys`), 200);
    expect(stillListed.items.map((k) => k.id)).toContain(bKey!.id);
    // Nor its secrets, in plaintext or to replace: those stay with the agent's own key.
    await json(await cli('GET', `/agents/${a}/secrets`, { token: keyA }), 200);
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { secrets: { STOLEN: 'x' } }],
    ] as const) {
      const refused = await cli(method, `/agents/${b}/secrets`, { body, token: keyA });
      expect((await json<{ detail: string }>(refused, 404)).detail).toBe('Agent not found');
    }
    const nonPeer = await cli('GET', `/agents/${c}/keys`, { token: keyA });
    expect((await json<{ detail: string }>(nonPeer, 404)).detail).toBe('Agent not found');

    // The edge is gone: so is the reach, at once.
    await json(
      await cli('PUT', `/orchestrations/${created.id}`, { body: { edges: [{ from: c, to: d }] } }),
      200,
    );
    expect(await reads(keyA, b)).toBe(404);
    expect(await reads(keyB, a)).toBe(404);
    expect(await reads(keyC, d)).toBe(200);
    expect(await reads(keyA, a)).toBe(200);
    const gone = await server.request('GET', `/v2/threads/${peerThread.thread_id}`, { token: keyA });
    expect((await json<{ detail: string }>(gone, 404)).detail).toBe('Thread not found');
  });
});

/** The five orchestration routes (the listing of a team that does not exist unless ids are given). */
function fiveRoutes(orchestrationId: string, org = absent, team = absent): [string, string][] {
  return [
    ['GET', `/orgs/${org}/teams/${team}/orchestrations`],
    ['POST', '/orchestrations'],
    ['GET', `/orchestrations/${orchestrationId}`],
    ['GET', `/orchestrations/${orchestrationId}/manifest`],
    ['PUT', `/orchestrations/${orchestrationId}`],
  ];
}
