import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretBox } from '@paddock/core';
import { openStore } from '@paddock/store';
import { createPostgresDatabase, testDatabases } from '@paddock/testing';
import { startInjectedServer, type TestServer } from '@paddock/testing/server';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, allEvents, json } from './helpers.ts';

/**
 * Issue 10 §5: MCP server header and env values are secrets. No answer (to a read-only token or to
 * the owner) carries them, the database holds them sealed, and they still reach the probe.
 */
describe.each(testDatabases())('MCP server secrets on $name', (database) => {
  let server: TestServer;
  let probe: Server;
  let probeUrl: string;
  /** The Authorization headers the probe target received. */
  const received: string[] = [];
  const headerValue = `Bearer mcp-header-secret-${randomBytes(6).toString('hex')}`;
  const envValue = `mcp-env-secret-${randomBytes(6).toString('hex')}`;
  beforeAll(async () => {
    // The probe target is on loopback, which outbound requests reach only where the deployment allows.
    server = await startInjectedServer(database, { PADDOCK_OUTBOUND_ALLOW: '127.0.0.1' });
    probe = createServer((req, res) => {
      received.push(String(req.headers.authorization));
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    probeUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    probe?.close();
    await server?.close();
  });

  const mcpServers = () => [
    { name: 'remote', url: probeUrl, headers: { Authorization: headerValue } },
    { name: 'local', command: 'mcp-local', args: ['--stdio'], env: { LOCAL_KEY: envValue } },
  ];
  const cli = (method: string, path: string, options: { body?: unknown; token?: string } = {}) =>
    server.request(method, `/v2/cli${path}`, options);
  /** The raw text of an answer, after checking its status. */
  const text = async (response: Response, status = 200) => {
    const body = await response.text();
    expect(response.status, body).toBe(status);
    return body;
  };
  const noSecret = (body: string) => {
    expect(body).not.toContain(headerValue.slice('Bearer '.length));
    expect(body).not.toContain(envValue);
  };

  it('answers names only, to a read-only token and to the owner, in every answer that shows the spec', async () => {
    const created = await text(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: 'mcp secrets', mcp_servers: mcpServers() }) },
      }),
      201,
    );
    noSecret(created);
    const { agent_id, thread_id } = JSON.parse(created) as { agent_id: string; thread_id: string };
    const readOnly = await adminTokenWith(server, ['read']);
    const { id: orchestration } = JSON.parse(
      await text(
        await cli('POST', '/orchestrations', {
          body: { team_id: await teamOf(agent_id), name: 'o', members: [{ agent_id }] },
        }),
        201,
      ),
    ) as { id: string };

    received.length = 0;
    for (const token of [readOnly, server.token]) {
      const reads = [
        cli('GET', `/agents/${agent_id}`, { token }),
        cli('GET', `/agents/${agent_id}/manifest`, { token }),
        cli('GET', `/orchestrations/${orchestration}/manifest`, { token }),
        cli('GET', `/agents/${agent_id}/mcp-servers`, { token }),
        server.request('GET', `/v2/threads/${thread_id}`, { token }),
      ];
      for (const read of reads) noSecret(await text(await read));
    }
    const patched = await text(
      await server.request('PATCH', `/v2/agents/${agent_id}`, { body: { title: 'renamed' } }),
    );
    noSecret(patched);
    expect(JSON.parse(patched).mcp_servers).toEqual([
      { name: 'remote', url: probeUrl, header_names: ['Authorization'] },
      { name: 'local', command: 'mcp-local', args: ['--stdio'], env_names: ['LOCAL_KEY'] },
    ]);
    noSecret(JSON.stringify(await allEvents(server, thread_id)));

    // At rest: sealed, not in plain text.
    const row = await server.paddock.services.store.db
      .selectFrom('agents')
      .select('mcp_servers')
      .where('id', '=', agent_id)
      .executeTakeFirstOrThrow();
    noSecret(row.mcp_servers);

    // Still where it is used: the probe (run by the report read above) sent the header.
    expect(received).toContain(headerValue);
  });

  it('keeps the values through a manifest pulled and published back unchanged', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: 'round trip', mcp_servers: mcpServers() }) },
      }),
      201,
    );
    const pulled = await json<{ revision: string; components: unknown[] }>(
      await cli('GET', `/agents/${agent_id}/manifest`),
      200,
    );
    noSecret(JSON.stringify(pulled));
    const published = await text(
      await cli('PUT', `/agents/${agent_id}/manifest`, {
        body: { base_revision: pulled.revision, components: pulled.components },
      }),
    );
    noSecret(published);
    expect(JSON.parse(published).revision).toBe(pulled.revision);
    received.length = 0;
    await text(await cli('GET', `/agents/${agent_id}/mcp-servers`));
    expect(received).toContain(headerValue);
  });

  async function teamOf(agentId: string): Promise<string> {
    const row = await server.paddock.services.store.db
      .selectFrom('agents')
      .select('team_id')
      .where('id', '=', agentId)
      .executeTakeFirstOrThrow();
    return row.team_id;
  }
});

describe.each(testDatabases())('migration 0013 on $name', (database) => {
  it('seals MCP server values an older version stored in plain text', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'paddock-migrate-'));
    const postgres =
      database.name === 'postgres' ? await createPostgresDatabase(database.adminUrl) : undefined;
    const open = (sealSecret?: (value: string) => string) =>
      openStore({ databaseUrl: postgres?.url, dataDir, sealSecret });
    try {
      const secrets = createSecretBox(randomBytes(32));
      const store = await open();
      // Back to the schema before 0013, with a row as the old code wrote it.
      await store.db.schema.dropTable('login_sessions').execute();
      await store.db.schema.dropIndex('tokens_thread_holder').execute();
      await store.db.schema.dropIndex('team_members_user').execute();
      await store.db.schema.alterTable('tokens').dropColumn('holder').execute();
      await sql`delete from kysely_migration where name = '0013-revocation-sealed-mcp'`.execute(store.db);
      const plain = [
        {
          name: 'remote',
          url: 'http://example.test/mcp',
          headers: { Authorization: 'Bearer plain-old-value' },
        },
      ];
      await insertAgentRow(store, JSON.stringify(plain));
      await store.close();

      const migrated = await open((value) => secrets.seal(value));
      const row = await migrated.db.selectFrom('agents').select('mcp_servers').executeTakeFirstOrThrow();
      await migrated.close();
      expect(row.mcp_servers).not.toContain('plain-old-value');
      const sealed = JSON.parse(row.mcp_servers) as { headers: Record<string, { sealed: string }> }[];
      expect(secrets.open(sealed[0]!.headers.Authorization!.sealed)).toBe('Bearer plain-old-value');
    } finally {
      await postgres?.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

async function insertAgentRow(
  store: Awaited<ReturnType<typeof openStore>>,
  mcpServers: string,
): Promise<void> {
  const at = new Date().toISOString();
  const { db } = store;
  const id = crypto.randomUUID();
  await db
    .insertInto('users')
    .values({ id, username: 'u', password_hash: null, issuer: null, subject: null, created_at: at })
    .execute();
  await db.insertInto('orgs').values({ id, name: 'o', created_at: at }).execute();
  await db.insertInto('teams').values({ id, org_id: id, name: 't', created_at: at }).execute();
  await db
    .insertInto('agents')
    .values({
      id,
      team_id: id,
      owner_user_id: id,
      spec_hash: 'h',
      title: 't',
      harness: 'coding_alpha',
      machine_kind: 'sandbox_a',
      machine_size: 'S',
      model: null,
      instructions: null,
      entrypoint: null,
      mcp_servers: mcpServers,
      skills: '[]',
      secrets_enc: null,
      tagline: null,
      created_at: at,
      updated_at: at,
    } as never)
    .execute();
}
