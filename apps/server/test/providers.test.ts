import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import { insertUser } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startInjectedServer, type TestServer } from '@paddock/testing/server';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDeploymentConfig } from '../src/startup/deployment-config.ts';
import { agentSpec, json } from './helpers.ts';

interface Capabilities {
  providers: {
    machine_kind: string;
    sizes: string[];
    shared_folders: boolean;
    accelerators: string[];
    available: boolean;
    reason?: string;
    isolation?: string;
  }[];
}

function configFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
  writeFileSync(path, content);
  return path;
}

const createOn = (server: TestServer, machineKind: string, harness = 'coding_alpha') =>
  server.request('POST', '/v2/threads', {
    body: { agent: agentSpec({ machine_kind: machineKind, harness }) },
  });

// On one database: the providers are the subject; the store's own tests run on both.
describe.each(testDatabases().slice(0, 1))('sandbox providers on $name', (database) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('describes all six providers, enabled or not, and which this host can run', async () => {
    // Switched on, so what `available` says is whether this host can run them.
    const config =
      'providers:\n  sandbox_b: { enabled: true }\n  sandbox_e: { enabled: true }\n  sandbox_f: { enabled: true }\n';
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile(config),
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    });
    const { providers } = await json<Capabilities>(
      await server.request('GET', '/v2/machines/capabilities'),
      200,
    );
    expect(providers.map((p) => p.machine_kind)).toEqual([
      'sandbox_a',
      'sandbox_b',
      'sandbox_c',
      'sandbox_d',
      'sandbox_e',
      'sandbox_f',
    ]);
    const byKind = Object.fromEntries(providers.map((p) => [p.machine_kind, p]));
    expect(byKind.sandbox_a).toMatchObject({ sizes: ['S', 'M', 'L'], shared_folders: true, available: true });
    expect(byKind.sandbox_a!.isolation).toMatch(/bubblewrap|process/);
    expect(byKind.sandbox_c).toMatchObject({ sizes: ['S', 'M', 'L'], shared_folders: true });
    for (const kind of ['sandbox_b', 'sandbox_d', 'sandbox_e', 'sandbox_f']) {
      expect(byKind[kind]).toMatchObject({ sizes: ['L'], shared_folders: false, accelerators: [] });
    }
    // Self-hosted runners can always connect; whether one is there is known only per agent, at a boot.
    expect(byKind.sandbox_e).toMatchObject({ available: true, isolation: 'self-hosted runners' });
    // This host cannot run micro-VM guests: said, with the reason, rather than pretended.
    expect(byKind.sandbox_f).toMatchObject({ available: false });
    expect(byKind.sandbox_f!.reason).toMatch(/kvm|qemu|micro-VM/i);
    await json(await server.request('GET', '/v2/machines/capabilities', { token: null }), 401);
  });

  it('refuses a provider switched off (503), one that cannot run here (503) and a runtime it does not take (422)', async () => {
    const path = configFile('providers:\n  sandbox_b: { enabled: true }\n');
    // No Docker engine there, so sandbox_b cannot run (docker-sandbox.test.ts runs it on one).
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: path,
      DOCKER_HOST: 'unix:///nonexistent/docker.sock',
    });
    const off = await json<{ detail: { code: string } }>(await createOn(server, 'sandbox_c'), 503);
    expect(off.detail.code).toBe('provider_disabled');
    const unavailable = await json<{ detail: { code: string; message: string } }>(
      await createOn(server, 'sandbox_b'),
      503,
    );
    expect(unavailable.detail.code).toBe('provider_unavailable');
    expect(unavailable.detail.message).toContain('sandbox_b cannot run here');
    const runtime = await json<{ detail: { code: string } }>(
      await createOn(server, 'sandbox_d', 'knowledge_cloud'),
      422,
    );
    expect(runtime.detail.code).toBe('runtime_not_supported');
    await json(await createOn(server, 'sandbox_a'), 201);
  });

  it('says per caller which providers agent create takes: switched off or outside their rollout is unavailable, with its reason', async () => {
    const insider = newId();
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile(
        `providers:\n  sandbox_a: { enabled: true, rollout: { users: ['${insider}'] } }\n  sandbox_c: { enabled: false }\n  sandbox_d: { enabled: true, rollout: { percent: 100 } }\n`,
      ),
    });
    const { db } = server.paddock.services.store;
    await insertUser(db, {
      id: insider,
      username: `insider-${insider}`,
      password_hash: null,
      issuer: null,
      subject: null,
      created_at: timestamp(),
    });
    const insiderToken = (await mintToken(db, { kind: 'pat', userId: insider, name: 'in', scopes: ['read'] }))
      .token;
    const providersFor = async (token?: string) =>
      Object.fromEntries(
        (
          await json<Capabilities>(await server!.request('GET', '/v2/machines/capabilities', { token }), 200)
        ).providers.map((p) => [p.machine_kind, p]),
      );
    const refusal = async (machineKind: string, status: number) =>
      (await json<{ detail: { message: string } }>(await createOn(server!, machineKind), status)).detail
        .message;

    const admin = await providersFor();
    expect(admin.sandbox_a).toMatchObject({
      available: false,
      reason: await refusal('sandbox_a', 403),
    });
    expect(admin.sandbox_a!.reason).toBe('this account is outside the rollout of sandbox_a');
    expect(admin.sandbox_c).toMatchObject({ available: false, reason: await refusal('sandbox_c', 503) });
    expect(admin.sandbox_c!.reason).toBe('sandbox_c is not enabled in this deployment');
    expect(admin.sandbox_d).toMatchObject({ available: true });
    expect(admin.sandbox_d).not.toHaveProperty('reason');
    await json(await createOn(server, 'sandbox_d'), 201);

    const inside = await providersFor(insiderToken);
    expect(inside.sandbox_a).toMatchObject({ available: true });
    expect(inside.sandbox_a).not.toHaveProperty('reason');
    expect(inside.sandbox_c).toMatchObject({ available: false });
  });

  it('takes sandbox_e agents once the config enables the provider (off by default)', async () => {
    server = await startInjectedServer(database);
    expect(
      (await json<{ detail: { code: string } }>(await createOn(server, 'sandbox_e'), 503)).detail.code,
    ).toBe('provider_disabled');
    await server.close();
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile('providers:\n  sandbox_e: { enabled: true }\n'),
    });
    await json(await createOn(server, 'sandbox_e'), 201);
  });

  it('gives each agent a size its provider offers: L by default where L is all there is, 422 for another', async () => {
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile('providers:\n  sandbox_d: { enabled: true }\n'),
    });
    const sizeOf = async (agentId: string) =>
      (
        await json<{ machine_size: string }>(
          await server!.request('PATCH', `/v2/agents/${agentId}`, { body: {} }),
          200,
        )
      ).machine_size;
    const onD = await json<{ agent_id: string }>(await createOn(server, 'sandbox_d'), 201);
    expect(await sizeOf(onD.agent_id)).toBe('L');
    const onA = await json<{ agent_id: string }>(await createOn(server, 'sandbox_a'), 201);
    expect(await sizeOf(onA.agent_id)).toBe('S');

    const refused = await server.request('POST', '/v2/threads', {
      body: { agent: agentSpec({ machine_kind: 'sandbox_d', machine_size: 'S', title: 'small' }) },
    });
    expect((await json<{ detail: { code: string; message: string } }>(refused, 422)).detail).toEqual({
      code: 'size_not_offered',
      message: 'sandbox_d offers size L, not S',
    });
    const patched = await server.request('PATCH', `/v2/agents/${onD.agent_id}`, {
      body: { machine_size: 'M' },
    });
    expect((await json<{ detail: { code: string } }>(patched, 422)).detail.code).toBe('size_not_offered');
    expect(await sizeOf(onD.agent_id)).toBe('L');
  });

  it('admits only accounts inside a provider rollout (403 outside)', async () => {
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile(
        'providers:\n  sandbox_a:\n    enabled: true\n    rollout: { orgs: [], users: [] }\n',
      ),
    });
    const outside = await json<{ detail: { code: string } }>(await createOn(server, 'sandbox_a'), 403);
    expect(outside.detail.code).toBe('provider_not_in_rollout');
    await server.close();
    const everyone = configFile('providers:\n  sandbox_a: { enabled: true, rollout: { percent: 100 } }\n');
    server = await startInjectedServer(database, { PADDOCK_CONFIG: everyone });
    await json(await createOn(server, 'sandbox_a'), 201);
  });

  it('switches the default provider off when the config says so', async () => {
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: configFile('providers:\n  sandbox_a: { enabled: false }\n'),
    });
    expect(
      (await json<{ detail: { code: string } }>(await createOn(server, 'sandbox_a'), 503)).detail.code,
    ).toBe('provider_disabled');
  });
});

describe('deployment config', () => {
  it('names the bad setting in one line', () => {
    expect(() => loadDeploymentConfig(configFile('providers:\n  sandbox_z: { enabled: true }\n'))).toThrow(
      /invalid PADDOCK_CONFIG .*providers/,
    );
    expect(() =>
      loadDeploymentConfig(configFile('providers:\n  sandbox_a: { enabled: yes-please }\n')),
    ).toThrow(/providers\.sandbox_a\.enabled/);
    expect(() => loadDeploymentConfig('/nonexistent/paddock.yaml')).toThrow(/invalid PADDOCK_CONFIG/);
    expect(loadDeploymentConfig(undefined).providers).toEqual({ sandbox_a: { enabled: true } });
  });
});
