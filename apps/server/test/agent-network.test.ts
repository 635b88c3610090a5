import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sandboxNetwork } from '@paddock/core';
import { type ControlAgent, parseAddressRanges } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { listThreadsForTest, startInjectedServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeploymentConfig } from '../src/startup/deployment-config.ts';
import { json } from './helpers.ts';

type CodeDetail = { detail: { code: string; message: string } & Record<string, unknown> };
type Issues = { detail: { loc: (string | number)[]; msg: string }[] };
type AgentRecord = { id: string; network: unknown; updated_at: string };

function configFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
  writeFileSync(path, content);
  return path;
}

const cappedConfig = `network:
  full: false
  domains: [Git.Example.com, "*.mirror.example"]
  allow_addresses: [10.1.2.3, 10.8.0.0/16]
`;

/** What one server answers about agents' network policies: its agents, through both surfaces. */
function agentsOf(server: () => TestServer) {
  const request = (method: string, path: string, body?: unknown) => server().request(method, path, { body });
  return {
    request,
    /** Creates an agent through POST /v2/threads (an idle thread, no sandbox). */
    thread: (agent: Record<string, unknown>) => request('POST', '/v2/threads', { agent }),
    patch: (agentId: string, body: unknown) => request('PATCH', `/v2/agents/${agentId}`, body),
    get: async (agentId: string) => json<AgentRecord>(await request('GET', `/v2/agents/${agentId}`), 200),
    row: (agentId: string) =>
      server()
        .paddock.services.store.db.selectFrom('agents')
        .selectAll()
        .where('id', '=', agentId)
        .executeTakeFirstOrThrow(),
    teamId: async () => {
      const orgs = await json<{ items: { id: string }[] }>(await request('GET', '/v2/cli/orgs'), 200);
      const teams = await json<{ items: { id: string }[] }>(
        await request('GET', `/v2/cli/orgs/${orgs.items[0]!.id}/teams`),
        200,
      );
      return teams.items[0]!.id;
    },
  };
}

describe.each(testDatabases())('agent network policies on $name', (database) => {
  let open: TestServer;
  let capped: TestServer;
  const api = agentsOf(() => open);
  const cappedApi = agentsOf(() => capped);
  beforeAll(async () => {
    [open, capped] = await Promise.all([
      startInjectedServer(database),
      startInjectedServer(database, { PADDOCK_CONFIG: configFile(cappedConfig) }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([open?.close(), capped?.close()]);
  });

  it('answers registries by default, and allow lists lower-cased; bad patterns are 422', async () => {
    const plain = await json<{ agent_id: string }>(await api.thread({ instructions: 'net default' }), 201);
    expect((await api.get(plain.agent_id)).network).toBe('registries');
    expect((await api.row(plain.agent_id)).network).toBeNull();

    const allow = { allow: ['Example.COM', '*.Pkg.Example.org', '10.1.2.3', '2001:DB8::1'] };
    const listed = await json<{ agent_id: string }>(
      await api.thread({ instructions: 'net allow', network: allow }),
      201,
    );
    expect((await api.get(listed.agent_id)).network).toEqual({
      allow: ['example.com', '*.pkg.example.org', '10.1.2.3', '2001:db8::1'],
    });

    for (const network of [
      { allow: ['example.com:443'] },
      { allow: ['https://example.com'] },
      { allow: ['example.com/path'] },
      { allow: ['exa mple.com'] },
      { allow: ['foo.*.example.com'] },
      { allow: ['example.com'], deny: ['x.example'] },
      { allow: Array.from({ length: 101 }, (_, i) => `h${i}.example`) },
      'open',
    ]) {
      const refused = await json<Issues>(await api.thread({ instructions: 'net bad', network }), 422);
      expect(refused.detail[0]!.loc).toContain('network');
      expect(
        (await json<Issues>(await api.patch(plain.agent_id, { network }), 422)).detail[0]!.loc,
      ).toContain('network');
    }
  });

  it('PATCH changes it and null resets it; registries keeps the spec hash, none changes it', async () => {
    // With its title given: a PATCH writes the derived title into the spec (and its hash) otherwise.
    const spec = { instructions: 'net patch', title: 'net patch', secrets: { KEY: 'value' } };
    const { agent_id } = await json<{ agent_id: string }>(await api.thread(spec), 201);
    const before = await api.row(agent_id);

    // registries is the default: the same agent, untouched, by PATCH and by spec.
    const same = await json<AgentRecord>(await api.patch(agent_id, { network: 'registries' }), 200);
    expect(same).toMatchObject({ network: 'registries', updated_at: before.updated_at });
    expect((await api.row(agent_id)).spec_hash).toBe(before.spec_hash);
    const again = await json<{ agent_id: string }>(await api.thread({ ...spec, network: 'registries' }), 201);
    expect(again.agent_id).toBe(agent_id);

    expect((await json<AgentRecord>(await api.patch(agent_id, { network: 'none' }), 200)).network).toBe(
      'none',
    );
    const offline = await api.row(agent_id);
    expect(offline.network).toBe('"none"');
    expect(offline.spec_hash).not.toBe(before.spec_hash);
    expect((await api.get(agent_id)).network).toBe('none');
    // Another field left alone keeps the policy.
    expect((await json<AgentRecord>(await api.patch(agent_id, { model: 'scripted' }), 200)).network).toBe(
      'none',
    );
    await json(await api.patch(agent_id, { model: null }), 200);

    const reset = await json<AgentRecord>(await api.patch(agent_id, { network: null }), 200);
    expect(reset.network).toBe('registries');
    expect(await api.row(agent_id)).toMatchObject({ network: null, spec_hash: before.spec_hash });
  });

  it('the control plane creates, changes and lists agents with it', async () => {
    const teamId = await api.teamId();
    const created = await json<ControlAgent>(
      await api.request('POST', '/v2/cli/agents', { team_id: teamId, name: 'net cli', network: 'none' }),
      201,
    );
    expect(created.network).toBe('none');
    const plain = await json<ControlAgent>(
      await api.request('POST', '/v2/cli/agents', { team_id: teamId, name: 'net cli plain' }),
      201,
    );
    expect(plain.network).toBe('registries');

    const put = (body: unknown) => api.request('PUT', `/v2/cli/agents/${created.id}`, body);
    const listed = await json<ControlAgent>(await put({ network: { allow: ['*.Example.com'] } }), 200);
    expect(listed.network).toEqual({ allow: ['*.example.com'] });
    expect(
      (await json<ControlAgent>(await api.request('GET', `/v2/cli/agents/${created.id}`), 200)).network,
    ).toEqual({ allow: ['*.example.com'] });
    expect((await api.get(created.id)).network).toEqual({ allow: ['*.example.com'] });
    await json(await put({ network: { allow: ['example.com:22'] } }), 422);
    expect((await json<ControlAgent>(await put({ network: null }), 200)).network).toBe('registries');
    expect((await json<ControlAgent>(await put({ network: 'full' }), 200)).network).toBe('full');

    const orgs = await json<{ items: { id: string }[] }>(await api.request('GET', '/v2/cli/orgs'), 200);
    const team = await json<{ items: ControlAgent[] }>(
      await api.request('GET', `/v2/cli/orgs/${orgs.items[0]!.id}/teams/${teamId}/agents`),
      200,
    );
    const byId = new Map(team.items.map((a) => [a.id, a.network]));
    expect(byId.get(created.id)).toBe('full');
    expect(byId.get(plain.id)).toBe('registries');
    expect(team.items.every((a) => a.network !== undefined)).toBe(true);
  });

  it('a deployment without full refuses it (422 network_not_allowed) and runs stored full agents as registries', async () => {
    expect(capped.paddock.services.network).toEqual({
      full: false,
      domains: ['git.example.com', '*.mirror.example'],
      allowAddresses: parseAddressRanges('10.1.2.3, 10.8.0.0/16'),
    });
    expect(open.paddock.services.network).toEqual({ full: true, domains: [], allowAddresses: [] });

    const notAllowed = async (response: Response) =>
      expect((await json<CodeDetail>(response, 422)).detail).toMatchObject({
        code: 'network_not_allowed',
        network: 'full',
      });
    const threads = (await listThreadsForTest(capped)).length;
    await notAllowed(await cappedApi.thread({ instructions: 'net capped', network: 'full' }));
    expect(await listThreadsForTest(capped)).toHaveLength(threads);

    const teamId = await cappedApi.teamId();
    await notAllowed(
      await cappedApi.request('POST', '/v2/cli/agents', {
        team_id: teamId,
        name: 'net capped',
        network: 'full',
      }),
    );
    const { agent_id } = await json<{ agent_id: string }>(
      await cappedApi.thread({ instructions: 'net capped', network: 'none' }),
      201,
    );
    await notAllowed(await cappedApi.patch(agent_id, { network: 'full' }));
    await notAllowed(await cappedApi.request('PUT', `/v2/cli/agents/${agent_id}`, { network: 'full' }));
    expect((await cappedApi.get(agent_id)).network).toBe('none');
    const listed = await cappedApi.patch(agent_id, { network: { allow: ['pkg.example'] } });
    expect((await json<AgentRecord>(listed, 200)).network).toEqual({ allow: ['pkg.example'] });

    // An agent stored as full before the ceiling changed: shown as stored, but its sandboxes get registries.
    await capped.paddock.services.store.db
      .updateTable('agents')
      .set({ network: '"full"' })
      .where('id', '=', agent_id)
      .execute();
    expect((await cappedApi.get(agent_id)).network).toBe('full');
    const row = await cappedApi.row(agent_id);
    expect(sandboxNetwork(capped.paddock.services, row)).toBe('registries');
    expect(sandboxNetwork(open.paddock.services, row)).toBe('full');
    // Its other fields still change.
    await json(await cappedApi.patch(agent_id, { instructions: 'net capped, renamed' }), 200);
    expect((await cappedApi.get(agent_id)).network).toBe('full');
  });
});

describe('the deployment config network block', () => {
  it('defaults to full allowed, no domains, no addresses; bad entries stop start-up naming them', () => {
    expect(loadDeploymentConfig(undefined).network).toEqual({ full: true, domains: [], allowAddresses: [] });
    expect(loadDeploymentConfig(configFile('network: {}\n')).network).toEqual({
      full: true,
      domains: [],
      allowAddresses: [],
    });
    expect(loadDeploymentConfig(configFile('network: { full: false }\n')).network.full).toBe(false);
    expect(() => loadDeploymentConfig(configFile('network: { domains: ["example.com:443"] }\n'))).toThrow(
      /network\.domains\.0/,
    );
    expect(() => loadDeploymentConfig(configFile('network: { allow_addresses: [example.com] }\n'))).toThrow(
      /network\.allow_addresses\.0: example\.com is not an IP address or CIDR range/,
    );
    expect(() => loadDeploymentConfig(configFile('network: { everything: true }\n'))).toThrow(/network/);
  });
});
