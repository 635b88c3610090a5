import { randomBytes } from 'node:crypto';
import { newId, type PublishedComponent, timestamp } from '@paddock/protocol';
import { findAgent, insertSkillVersion, type Store } from '@paddock/store';
import { openTestStore, seedThread, testDatabases } from '@paddock/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openMcpServers } from '../src/agents/mcp-server-secrets.ts';
import { type Ctx, systemClock } from '../src/context.ts';
import { createSecretBox } from '../src/crypto/secret-box.ts';
import { getManifest, getRevision } from '../src/manifests/get-manifest.ts';
import { publishManifest } from '../src/manifests/publish-manifest.ts';
import { recordingLog, userActor } from './verb-fakes.ts';

const instructions = (text: string): PublishedComponent => ({
  type: 'instructions',
  name: 'instructions',
  files: [{ path: 'instructions.md', content: text }],
});
const skill = (source: string): PublishedComponent => ({
  type: 'skill',
  name: source.replace(/^registry:/, '').replace(/@.*$/, ''),
  files: [{ path: 'skill.json', content: JSON.stringify({ source }) }],
});
const mcpServer = (name: string, config: Record<string, unknown>): PublishedComponent => ({
  type: 'mcp_server',
  name,
  files: [{ path: 'server.json', content: JSON.stringify(config) }],
});
const stored = (type: 'playbook' | 'eval', name: string, content = `# ${name}\n`): PublishedComponent => ({
  type,
  name,
  files: content === '' ? [] : [{ path: `${type}.md`, content }],
});

describe.each(testDatabases())('manifests on $name', (database) => {
  let store: Store;
  let close: () => Promise<void>;
  beforeAll(async () => {
    ({ store, close } = await openTestStore(database));
  });
  afterAll(() => close());

  /** A fresh agent (no spec components yet) and the context of its owner, who may publish. */
  async function agentAndCtx() {
    const seed = await seedThread(store);
    const ctx: Ctx = {
      store,
      actor: userActor(seed.userId, seed.teamId),
      clock: systemClock,
      log: recordingLog(),
    };
    // Manifests use no other service: the rest of the server's stays out of the test.
    const services = { secrets: createSecretBox(randomBytes(32)) };
    const agentId = seed.agentId;
    const verbs = {
      publish: (body: Parameters<typeof publishManifest>[2]['body']) =>
        publishManifest(ctx, services, { agentId, body }),
      read: () => getManifest(ctx, services, { agentId }),
      revision: async () => (await getRevision(ctx, services, { agentId })).revision,
    };
    return { agentId, ctx, services, ...verbs };
  }

  const rows = (agentId: string) =>
    store.db
      .selectFrom('agent_components')
      .select(['kind', 'name', 'status', 'updated_at', 'archived_at'])
      .where('agent_id', '=', agentId)
      .orderBy('kind')
      .orderBy('name')
      .execute();

  it('reconcile_evals without base_revision is 400 before anything is read, even for an agent that does not exist', async () => {
    const { ctx, services } = await agentAndCtx();
    await expect(
      publishManifest(ctx, services, { agentId: newId(), body: { components: [], reconcile_evals: true } }),
    ).rejects.toMatchObject({ code: 'base_revision_required' });
  });

  it('a playbook or eval published unchanged is not rewritten; a changed or revived one is', async () => {
    const { agentId, publish } = await agentAndCtx();
    await publish({
      components: [stored('playbook', 'keep'), stored('playbook', 'edit'), stored('eval', 'gone')],
    });
    await publish({
      components: [stored('playbook', 'keep'), { ...stored('eval', 'gone'), status: 'archived' }],
    });
    const archived = (await rows(agentId)).find((r) => r.name === 'gone')!;
    expect(archived).toMatchObject({ status: 'archived', archived_at: expect.any(String) });
    // Marked old, so a rewrite would show.
    const old = '2000-01-01T00:00:00.000Z';
    await store.db
      .updateTable('agent_components')
      .set({ updated_at: old })
      .where('agent_id', '=', agentId)
      .execute();

    await publish({
      components: [
        stored('playbook', 'keep'),
        stored('playbook', 'edit', '# edited\n'),
        stored('eval', 'gone'),
      ],
    });

    expect(await rows(agentId)).toEqual([
      {
        kind: 'eval',
        name: 'gone',
        status: 'active',
        updated_at: expect.not.stringMatching(old),
        archived_at: null,
      },
      {
        kind: 'playbook',
        name: 'edit',
        status: 'active',
        updated_at: expect.not.stringMatching(old),
        archived_at: null,
      },
      { kind: 'playbook', name: 'keep', status: 'active', updated_at: old, archived_at: null },
    ]);
  });

  it('an eval without files is refused with a warning; a stored one of that name stays, even when evals are reconciled', async () => {
    const { agentId, publish, revision } = await agentAndCtx();
    await publish({ components: [stored('eval', 'tone')] });
    const published = await publish({
      components: [stored('eval', 'tone', ''), stored('eval', 'empty', '')],
      reconcile_evals: true,
      base_revision: await revision(),
    });
    expect(published.warnings?.map((w) => `${w.name}:${w.code}`)).toEqual([
      'tone:eval_without_criteria',
      'empty:eval_without_criteria',
    ]);
    expect((await rows(agentId)).map((r) => `${r.name}:${r.status}`)).toEqual(['tone:active']);
  });

  it('a spec component cannot be archived: a warning, and what the agent had is kept', async () => {
    const { agentId, ctx, publish } = await agentAndCtx();
    // D14: the source must resolve, so the registry holds it (for the agent's organization).
    const agentOrg = await store.db
      .selectFrom('agents')
      .innerJoin('teams', 'teams.id', 'agents.team_id')
      .select('teams.org_id')
      .where('agents.id', '=', agentId)
      .executeTakeFirstOrThrow();
    await insertSkillVersion(store.db, {
      creator: 'acme',
      slug: 'lint',
      version: '1.0.0',
      org_id: agentOrg.org_id,
      name: 'lint',
      description: 'Lints',
      public: 0,
      hash: 'h',
      files: '[]',
      published_by: ctx.actor.userId,
      created_at: timestamp(),
    });
    await publish({ components: [instructions('Be brief.'), skill('registry:acme/lint@1.0.0')] });
    const published = await publish({
      components: [
        { ...instructions('Be brief.'), status: 'archived' },
        { ...skill('registry:acme/lint@1.0.0'), status: 'archived' },
      ],
    });
    expect(published.warnings?.map((w) => `${w.type}:${w.code}`)).toEqual([
      'instructions:not_archivable',
      'skill:not_archivable',
    ]);
    const agent = (await findAgent(store.db, agentId))!;
    expect([agent.instructions, JSON.parse(agent.skills)]).toEqual([
      'Be brief.',
      [{ source: 'registry:acme/lint@1.0.0' }],
    ]);
  });

  it("an MCP server's header_names keep the values stored for them; a name without a stored value is a warning", async () => {
    const { agentId, services, publish, read } = await agentAndCtx();
    await publish({
      components: [mcpServer('search', { url: 'https://mcp.example.com', headers: { 'x-key': 'secret-1' } })],
    });
    const pulled = (await read()).components.find((c) => c.type === 'mcp_server')!;
    expect(JSON.parse(pulled.files[0]!.content)).toEqual({
      url: 'https://mcp.example.com',
      header_names: ['x-key'],
    });

    const servers = async () =>
      openMcpServers(services.secrets, (await findAgent(store.db, agentId))!.mcp_servers);
    // Published back as pulled, with a new url: the value is kept, never having left the server.
    const moved = { url: 'https://mcp2.example.com', header_names: ['x-key'] };
    expect((await publish({ components: [mcpServer('search', moved)] })).warnings).toBeUndefined();
    expect(await servers()).toEqual([
      { name: 'search', url: 'https://mcp2.example.com', headers: { 'x-key': 'secret-1' } },
    ]);

    const unknown = { url: 'https://mcp3.example.com', header_names: ['x-key', 'x-other'] };
    const warned = await publish({ components: [mcpServer('search', unknown)] });
    expect(warned.warnings?.map((w) => w.code)).toEqual(['invalid_mcp_server']);
    expect((await servers())[0]?.url).toBe('https://mcp2.example.com');
  });

  it("the revision moves when an MCP server's header value changes, and not when nothing does", async () => {
    const { publish, revision } = await agentAndCtx();
    const server = (value: string) =>
      mcpServer('search', { url: 'https://mcp.example.com', headers: { 'x-key': value } });
    await publish({ components: [server('one')] });
    const first = await revision();
    await publish({ components: [server('one')] });
    expect(await revision()).toBe(first);
    await publish({ components: [server('two')] });
    expect(await revision()).not.toBe(first);
  });

  it('an agent out of reach is 404 and nothing is written', async () => {
    const { agentId, revision } = await agentAndCtx();
    const stranger = await agentAndCtx();
    const before = await revision();
    await expect(
      publishManifest(stranger.ctx, stranger.services, {
        agentId,
        body: { components: [stored('playbook', 'x')] },
      }),
    ).rejects.toMatchObject({ code: 'agent_not_found' });
    await expect(getManifest(stranger.ctx, stranger.services, { agentId })).rejects.toMatchObject({
      code: 'agent_not_found',
    });
    expect([await revision(), await rows(agentId)]).toEqual([before, []]);
  });
});
