import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentHasTeamAccess, mintToken } from '@paddock/core';
import { type ControlAgent, newId, type Scope, timestamp } from '@paddock/protocol';
import {
  backfillOwnTeamGrants,
  grantAgentToTeam,
  insertOrFindAgent,
  insertOrg,
  insertOrgMember,
  insertTeam,
  insertTeamMember,
  insertUser,
} from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startControlPlaneServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, createIdleThread, json, sandboxToken } from './helpers.ts';

type Detail = { detail: string };
type CodeDetail = { detail: { code: string; message: string } & Record<string, unknown> };
type Connection = { kind: string; connected: boolean; manageable_from_cli: boolean } & Record<
  string,
  unknown
>;

describe.each(testDatabases())('control-plane organizations, teams and agents on $name', (database) => {
  let server: TestServer;
  let orgId: string;
  let teamId: string;
  let readOnly: string;
  /** A user of another organization, with a team and an agent of their own. */
  let outsider: { token: string; orgId: string; teamId: string; agentId: string };

  const cli = (method: string, path: string, options: { body?: unknown; token?: string | null } = {}) =>
    server.request(method, `/v2/cli${path}`, options);
  const db = () => server.paddock.services.store.db;
  const rawAgent = (id: string) =>
    db().selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

  /** A user with memberships inserted as an operator would, and a personal token with these scopes. */
  async function user(
    name: string,
    memberships: { orgs?: [string, string][]; teams?: [string, string][] },
    scopes: Scope[] = ['read', 'publish'],
  ) {
    const at = timestamp();
    const id = newId();
    await insertUser(db(), {
      id,
      username: `${name}-${id}`,
      password_hash: null,
      issuer: null,
      subject: null,
      created_at: at,
    });
    for (const [org, role] of memberships.orgs ?? [])
      await insertOrgMember(db(), { org_id: org, user_id: id, role, created_at: at });
    for (const [team, role] of memberships.teams ?? [])
      await insertTeamMember(db(), { team_id: team, user_id: id, role, created_at: at });
    const { token } = await mintToken(db(), { kind: 'pat', userId: id, name, scopes });
    return { id, token };
  }

  async function newTeam(name: string, token?: string) {
    return json<{ id: string; org_id: string; name: string }>(
      await cli('POST', `/orgs/${orgId}/teams`, { body: { name }, token }),
      201,
    );
  }

  const createAgent = async (body: Record<string, unknown>, token?: string) =>
    json<ControlAgent>(await cli('POST', '/agents', { body: { team_id: teamId, ...body }, token }), 201);

  const agentCount = async () => (await db().selectFrom('agents').select('id').execute()).length;

  beforeAll(async () => {
    server = await startControlPlaneServer(database);
    const orgs = await json<{ items: { id: string }[] }>(await cli('GET', '/orgs'), 200);
    orgId = orgs.items[0]!.id;
    const teams = await json<{ items: { id: string }[] }>(await cli('GET', `/orgs/${orgId}/teams`), 200);
    teamId = teams.items[0]!.id;
    const admin = await db()
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    readOnly = (await mintToken(db(), { kind: 'pat', userId: admin.id, name: 'ro', scopes: ['read'] })).token;

    const at = timestamp();
    const otherOrg = newId();
    const otherTeam = newId();
    await insertOrg(db(), { id: otherOrg, name: 'elsewhere', created_at: at });
    await insertTeam(db(), { id: otherTeam, org_id: otherOrg, name: 'theirs', created_at: at });
    const other = await user('outsider', { orgs: [[otherOrg, 'owner']], teams: [[otherTeam, 'owner']] });
    const theirs = await json<ControlAgent>(
      await cli('POST', '/agents', { body: { team_id: otherTeam, name: 'theirs' }, token: other.token }),
      201,
    );
    outsider = { token: other.token, orgId: otherOrg, teamId: otherTeam, agentId: theirs.id };
  });
  afterAll(() => server.close());

  describe('organizations and teams', () => {
    it('lists the caller’s organizations with their role, and an organization’s teams', async () => {
      expect(await json(await cli('GET', '/orgs'), 200)).toEqual({
        items: [{ id: orgId, name: 'default', role: 'owner' }],
      });
      expect(await json(await cli('GET', '/orgs', { token: outsider.token }), 200)).toEqual({
        items: [{ id: outsider.orgId, name: 'elsewhere', role: 'owner' }],
      });
      const teams = await json<{ items: unknown[] }>(await cli('GET', `/orgs/${orgId}/teams`), 200);
      expect(teams.items).toContainEqual({ id: teamId, org_id: orgId, name: 'default' });
      expect((await json<Detail>(await cli('GET', '/orgs', { token: null }), 401)).detail).toBe(
        'missing bearer token',
      );
      expect(
        (await json<Detail>(await cli('GET', `/orgs/${orgId}/teams`, { token: 'pdk_pat_nope' }), 401)).detail,
      ).toBe('invalid or expired PAT');
      // Another organization's teams: not a member, so not found (nor told apart from absent).
      for (const org of [orgId, newId()]) {
        const refused = await cli('GET', `/orgs/${org}/teams`, { token: outsider.token });
        expect((await json<Detail>(refused, 404)).detail).toBe('Organization not found');
      }
    });

    it('lets an organization owner create a team and makes them its owner; read-only tokens and plain members cannot', async () => {
      const team = await newTeam('platform');
      expect(team).toEqual({ id: expect.any(String), org_id: orgId, name: 'platform' });
      const owner = await db()
        .selectFrom('team_members')
        .innerJoin('users', 'users.id', 'team_members.user_id')
        .select(['users.username', 'team_members.role'])
        .where('team_id', '=', team.id)
        .execute();
      expect(owner).toEqual([{ username: 'admin', role: 'owner' }]);
      const teams = await json<{ items: { id: string }[] }>(await cli('GET', `/orgs/${orgId}/teams`), 200);
      expect(teams.items.map((t) => t.id)).toContain(team.id);

      const teamsBefore = await db().selectFrom('teams').select('id').execute();
      const member = await user('member', { orgs: [[orgId, 'member']], teams: [[teamId, 'member']] });
      const refusals = [
        [readOnly, 403, 'PAT lacks required scope: publish'],
        [member.token, 403, undefined],
        [outsider.token, 404, 'Organization not found'],
        [null, 401, 'missing bearer token'],
      ] as const;
      for (const [token, status, detail] of refusals) {
        const refused = await cli('POST', `/orgs/${orgId}/teams`, { body: { name: 'nope' }, token });
        const body = await json<Detail | CodeDetail>(refused, status);
        if (detail) expect(body.detail).toBe(detail);
        else expect((body as CodeDetail).detail.code).toBe('forbidden');
      }
      await json(await cli('POST', `/orgs/${orgId}/teams`, { body: { name: '  ' } }), 422);
      expect(await db().selectFrom('teams').select('id').execute()).toHaveLength(teamsBefore.length);

      // A login session is never scope-checked.
      const session = await login(server);
      await json(
        await cli('POST', `/orgs/${orgId}/teams`, { body: { name: 'by session' }, token: session }),
        201,
      );
    });
  });

  describe('agents', () => {
    it('creates an agent in a team (201, the D13 record) that POST /v2/threads then reuses by spec', async () => {
      const created = await createAgent({
        name: 'Release helper',
        tagline: 'Ships things',
        entrypoint: 'echo hi',
        default_model: 'scripted',
        memory_enabled: true,
        harness: 'coding_beta',
        machine_kind: 'sandbox_a',
      });
      expect(created).toEqual({
        id: expect.any(String),
        team_id: teamId,
        name: 'Release helper',
        tagline: 'Ships things',
        entrypoint: 'echo hi',
        default_model: 'scripted',
        memory_enabled: true,
        browser_enabled: false,
        harness: 'coding_beta',
        machine_kind: 'sandbox_a',
        network: 'registries',
        chat_connected: false,
        meeting_connected: false,
        code_host_connected: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/),
        updated_at: created.created_at,
      });
      expect(await json(await cli('GET', `/agents/${created.id}`), 200)).toEqual(created);
      // The same record as an agent of the public surface: its spec is name as title, default_model as model.
      const spec = {
        title: 'Release helper',
        model: 'scripted',
        entrypoint: 'echo hi',
        harness: 'coding_beta',
      };
      const thread = await json<{ agent_id: string }>(
        await server.request('POST', '/v2/threads', { body: { agent: spec } }),
        201,
      );
      expect(thread.agent_id).toBe(created.id);
      // Exactly this spec again in the same team: D4 keeps one agent per spec, named in the 409.
      const clash = await json<CodeDetail>(
        await cli('POST', '/agents', {
          body: {
            team_id: teamId,
            name: 'Release helper',
            entrypoint: 'echo hi',
            default_model: 'scripted',
            harness: 'coding_beta',
          },
        }),
        409,
      );
      expect(clash.detail).toMatchObject({ code: 'conflict', agent_id: created.id });
      // Defaults: the harness name as name, coding_alpha on sandbox_a.
      const bare = await json<ControlAgent>(
        await cli('POST', '/agents', { body: { team_id: teamId, harness: 'coding_gamma' } }),
        201,
      );
      expect(bare).toMatchObject({ name: 'coding_gamma', machine_kind: 'sandbox_a', tagline: null });
    });

    it('shows an agent made by POST /v2/threads as the same kind of record, in the caller’s default team', async () => {
      const { agent_id } = await json<{ agent_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ instructions: 'Made by a thread\nmore', model: 'scripted' }) },
        }),
        201,
      );
      expect(await json(await cli('GET', `/agents/${agent_id}`), 200)).toMatchObject({
        id: agent_id,
        team_id: teamId,
        name: 'Made by a thread',
        default_model: 'scripted',
        tagline: null,
        memory_enabled: false,
        browser_enabled: false,
        harness: 'coding_alpha',
        machine_kind: 'sandbox_a',
        chat_connected: false,
      });
    });

    it('refuses creates without publish, outside the caller’s teams, from bound credentials and with bad bodies; nothing is created', async () => {
      const { id } = await createAgent({ name: 'key holder' });
      const key = await json<{ key: string }>(await cli('POST', `/agents/${id}/keys`, { body: {} }), 201);
      const before = await agentCount();
      const read = await cli('POST', '/agents', { body: { team_id: teamId, name: 'ro' }, token: readOnly });
      expect((await json<Detail>(read, 403)).detail).toBe('PAT lacks required scope: publish');
      const bound = await cli('POST', '/agents', { body: { team_id: teamId, name: 'k' }, token: key.key });
      expect((await json<CodeDetail>(bound, 403)).detail.code).toBe('forbidden');
      for (const team of [outsider.teamId, newId()]) {
        const refused = await cli('POST', '/agents', { body: { team_id: team, name: 'x' } });
        expect((await json<Detail>(refused, 404)).detail).toBe('Team not found');
      }
      await json(await cli('POST', '/agents', { body: { name: 'no team' } }), 422);
      await json(await cli('POST', '/agents', { body: { team_id: teamId, machine_kind: 'sandbox_z' } }), 422);
      await json(await cli('POST', '/agents', { body: { team_id: teamId, chat_connected: true } }), 422);
      await json(await cli('POST', '/agents', { body: { team_id: teamId }, token: null }), 401);
      expect(await agentCount()).toBe(before);
    });

    it('reads only reachable agents: another team’s agent and an absent one are both 404 Agent not found', async () => {
      for (const id of [outsider.agentId, newId()]) {
        expect((await json<Detail>(await cli('GET', `/agents/${id}`), 404)).detail).toBe('Agent not found');
      }
      await json(await cli('GET', `/agents/${outsider.agentId}`, { token: outsider.token }), 200);
      await json(await cli('GET', '/agents/not-a-uuid'), 422);
      for (const path of ['', '/secrets', '/connections'])
        expect(
          (await json<Detail>(await cli('GET', `/agents/${outsider.agentId}${path}`, { token: null }), 401))
            .detail,
        ).toBe('missing bearer token');
    });

    it('PUT changes only the fields given, recomputes the spec hash, and refuses read-only flags', async () => {
      const agent = await createAgent({ name: 'Before', tagline: 'old line', default_model: 'scripted' });
      const hashBefore = (await rawAgent(agent.id)).spec_hash;
      const taglineOnly = await json<ControlAgent>(
        await cli('PUT', `/agents/${agent.id}`, { body: { tagline: 'new line', browser_enabled: true } }),
        200,
      );
      expect(taglineOnly).toMatchObject({
        name: 'Before',
        default_model: 'scripted',
        tagline: 'new line',
        browser_enabled: true,
        memory_enabled: false,
      });
      // The profile is outside the spec: the hash stays, so the spec still finds the agent.
      expect((await rawAgent(agent.id)).spec_hash).toBe(hashBefore);

      const renamed = await json<ControlAgent>(
        await cli('PUT', `/agents/${agent.id}`, {
          body: { name: 'After', default_model: null, entrypoint: 'echo up', machine_kind: 'sandbox_a' },
        }),
        200,
      );
      expect(renamed).toMatchObject({
        name: 'After',
        default_model: null,
        entrypoint: 'echo up',
        tagline: 'new line',
        browser_enabled: true,
        machine_kind: 'sandbox_a',
      });
      expect((await rawAgent(agent.id)).spec_hash).not.toBe(hashBefore);
      const reused = await json<{ agent_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: { title: 'After', entrypoint: 'echo up' } },
        }),
        201,
      );
      expect(reused.agent_id).toBe(agent.id);
      const cleared = await json<ControlAgent>(
        await cli('PUT', `/agents/${agent.id}`, { body: { tagline: null } }),
        200,
      );
      expect(cleared).toMatchObject({ tagline: null, name: 'After' });

      for (const flag of ['chat_connected', 'meeting_connected', 'code_host_connected']) {
        const refused = await json<{ detail: { loc: unknown[]; msg: string }[] }>(
          await cli('PUT', `/agents/${agent.id}`, { body: { [flag]: true } }),
          422,
        );
        expect(refused.detail[0]).toMatchObject({ loc: ['body', flag] });
        expect(refused.detail[0]!.msg).toMatch(/read-only/);
      }
    });

    it('PUT: machine_kind only as its current value (409 naming both); refusals change nothing', async () => {
      const agent = await createAgent({ name: 'Fixed kind' });
      const rowBefore = await rawAgent(agent.id);
      const conflict = await json<CodeDetail>(
        await cli('PUT', `/agents/${agent.id}`, { body: { machine_kind: 'sandbox_c', name: 'moved' } }),
        409,
      );
      expect(conflict.detail.message).toBe(
        'machine_kind is immutable after agent creation (current sandbox_a, requested sandbox_c)',
      );
      expect(conflict.detail).toMatchObject({ current: 'sandbox_a', requested: 'sandbox_c' });
      const read = await cli('PUT', `/agents/${agent.id}`, { body: { name: 'ro' }, token: readOnly });
      expect((await json<Detail>(read, 403)).detail).toBe('PAT lacks required scope: publish');
      const other = await cli('PUT', `/agents/${outsider.agentId}`, { body: { name: 'mine now' } });
      expect((await json<Detail>(other, 404)).detail).toBe('Agent not found');
      await json(await cli('PUT', `/agents/${agent.id}`, { body: { name: 'x' }, token: null }), 401);
      await json(await cli('PUT', `/agents/${agent.id}`, { body: { colour: 'red' } }), 422);
      expect(await rawAgent(agent.id)).toEqual(rowBefore);
      expect(
        await json(await cli('GET', `/agents/${outsider.agentId}`, { token: outsider.token }), 200),
      ).toMatchObject({
        name: 'theirs',
      });
      // The same value is a no-op.
      expect(
        await json(await cli('PUT', `/agents/${agent.id}`, { body: { machine_kind: 'sandbox_a' } }), 200),
      ).toEqual(await json(await cli('GET', `/agents/${agent.id}`), 200));
      expect(await rawAgent(agent.id)).toEqual(rowBefore);
    });
  });

  describe('secrets', () => {
    it('reads them in plaintext, stores them sealed, and PUT replaces the whole map', async () => {
      const agent = await createAgent({ name: 'Secret keeper' });
      expect(await json(await cli('GET', `/agents/${agent.id}/secrets`), 200)).toEqual({ secrets: {} });
      const hashEmpty = (await rawAgent(agent.id)).spec_hash;
      const put = await json(
        await cli('PUT', `/agents/${agent.id}/secrets`, {
          body: { secrets: { API_KEY: 'sk-plain-value-123', _under: 'second-plain' } },
        }),
        200,
      );
      expect(put).toEqual({ secrets: { API_KEY: 'sk-plain-value-123', _under: 'second-plain' } });
      // A read needs no scope.
      expect(await json(await cli('GET', `/agents/${agent.id}/secrets`, { token: readOnly }), 200)).toEqual(
        put,
      );
      const row = await rawAgent(agent.id);
      expect(row.secrets_enc).toMatch(/^v1:/);
      const rawRow = JSON.stringify(row);
      expect(rawRow).not.toContain('sk-plain-value-123');
      expect(rawRow).not.toContain('second-plain');
      expect(row.spec_hash).not.toBe(hashEmpty);

      // A changed value is a changed spec (D4): the hash moves, through the same path as PATCH.
      await json(
        await cli('PUT', `/agents/${agent.id}/secrets`, { body: { secrets: { API_KEY: 'rotated-value' } } }),
        200,
      );
      expect(await json(await cli('GET', `/agents/${agent.id}/secrets`), 200)).toEqual({
        secrets: { API_KEY: 'rotated-value' },
      });
      const rotated = await rawAgent(agent.id);
      expect(rotated.spec_hash).not.toBe(row.spec_hash);
      expect(JSON.stringify(rotated)).not.toContain('rotated-value');
    });

    it('refuses names that are not environment-variable names (400), read-only tokens and other teams; nothing changes', async () => {
      const agent = await createAgent({ name: 'Strict names' });
      await json(
        await cli('PUT', `/agents/${agent.id}/secrets`, { body: { secrets: { KEEP: 'kept' } } }),
        200,
      );
      const before = await rawAgent(agent.id);
      for (const name of ['1STARTS_WITH_DIGIT', 'has-dash', 'has space', '']) {
        const refused = await json<CodeDetail>(
          await cli('PUT', `/agents/${agent.id}/secrets`, { body: { secrets: { OK: 'v', [name]: 'v' } } }),
          400,
        );
        expect(refused.detail).toMatchObject({ code: 'invalid_env_name', names: [name] });
      }
      const read = await cli('PUT', `/agents/${agent.id}/secrets`, {
        body: { secrets: { OTHER: 'x' } },
        token: readOnly,
      });
      expect((await json<Detail>(read, 403)).detail).toBe('PAT lacks required scope: publish');
      await json(
        await cli('PUT', `/agents/${agent.id}/secrets`, { body: { secrets: {} }, token: null }),
        401,
      );
      await json(await cli('PUT', `/agents/${agent.id}/secrets`, { body: { KEEP: 'x' } }), 422);
      expect(await rawAgent(agent.id)).toEqual(before);
      for (const method of ['GET', 'PUT'])
        expect(
          (
            await json<Detail>(
              await cli(method, `/agents/${outsider.agentId}/secrets`, {
                body: method === 'PUT' ? { secrets: {} } : undefined,
              }),
              404,
            )
          ).detail,
        ).toBe('Agent not found');
    });
  });

  describe('integrations', () => {
    const chat = {
      bot_token: 'xoxb-very-secret-bot-token',
      signing_secret: 'signing-secret-abc',
      app_id: 'A123',
    };

    it('reports all four integrations; chat and meeting connect, rotate in place and disconnect idempotently', async () => {
      const agent = await createAgent({ name: 'Chatty' });
      const responses: string[] = [];
      const call = async (method: string, path: string, status: number, body?: unknown) => {
        const response = await cli(method, path, { body });
        const text = await response.text();
        responses.push(text);
        expect(response.status, text).toBe(status);
        return text ? JSON.parse(text) : undefined;
      };
      const report = await call('GET', `/agents/${agent.id}/connections`, 200);
      expect(report.items).toEqual([
        { kind: 'chat', connected: false, manageable_from_cli: true },
        { kind: 'meeting', connected: false, manageable_from_cli: true },
        {
          kind: 'code_host',
          connected: false,
          manageable_from_cli: false,
          unmanageable_reason: expect.any(String),
        },
        {
          kind: 'phone',
          connected: false,
          manageable_from_cli: false,
          unmanageable_reason: expect.any(String),
        },
      ]);

      const connected = await call('PUT', `/agents/${agent.id}/connections/chat`, 200, chat);
      expect(connected).toMatchObject({ kind: 'chat', connected: true, app_id: 'A123', app_name: null });
      const meeting = await call('PUT', `/agents/${agent.id}/connections/meeting`, 200, {
        bot_name: 'Notetaker',
        bot_image_url: 'https://example.com/bot.png',
      });
      expect(meeting).toMatchObject({ connected: true, bot_name: 'Notetaker' });
      expect(await call('GET', `/agents/${agent.id}`, 200)).toMatchObject({
        chat_connected: true,
        meeting_connected: true,
        code_host_connected: false,
      });
      const installed = await db()
        .selectFrom('agent_integrations')
        .selectAll()
        .where('agent_id', '=', agent.id)
        .orderBy('kind')
        .execute();
      expect(installed.map((r) => r.kind)).toEqual(['chat', 'meeting']);
      expect(JSON.stringify(installed)).not.toContain(chat.bot_token);
      expect(JSON.stringify(installed)).not.toContain(chat.signing_secret);

      // Fresh credentials rotate the install in place: one row, same creation, new sealed config.
      const fresh = { bot_token: 'xoxb-rotated-token', signing_secret: 'rotated-signing', app_name: 'Bot' };
      const rotated = await call('PUT', `/agents/${agent.id}/connections/chat`, 200, fresh);
      expect(rotated).toMatchObject({
        connected: true,
        app_id: null,
        app_name: 'Bot',
        connected_at: connected.connected_at,
      });
      const chatRows = await db()
        .selectFrom('agent_integrations')
        .selectAll()
        .where('agent_id', '=', agent.id)
        .where('kind', '=', 'chat')
        .execute();
      expect(chatRows).toHaveLength(1);
      expect(chatRows[0]!.config_sealed).not.toBe(installed[0]!.config_sealed);
      expect(JSON.parse(server.paddock.services.secrets.open(chatRows[0]!.config_sealed))).toEqual(fresh);
      expect(chatRows[0]!.config_sealed).not.toContain('xoxb');
      // The same credentials again: still one install.
      await call('PUT', `/agents/${agent.id}/connections/chat`, 200, fresh);

      await call('DELETE', `/agents/${agent.id}/connections/chat`, 204);
      await call('DELETE', `/agents/${agent.id}/connections/chat`, 204);
      expect(await call('GET', `/agents/${agent.id}`, 200)).toMatchObject({
        chat_connected: false,
        meeting_connected: true,
      });
      const after = await call('GET', `/agents/${agent.id}/connections`, 200);
      expect(after.items.map((c: Connection) => [c.kind, c.connected])).toEqual([
        ['chat', false],
        ['meeting', true],
        ['code_host', false],
        ['phone', false],
      ]);
      for (const text of responses) {
        for (const secret of [chat.bot_token, chat.signing_secret, fresh.bot_token, fresh.signing_secret])
          expect(text).not.toContain(secret);
      }
      // Code host and phone are not routed here at all.
      expect(
        (await json<Detail>(await cli('DELETE', `/agents/${agent.id}/connections/code_host`), 404)).detail,
      ).toBe('Not Found');
    });

    it('refuses bad bodies (422), read-only tokens (403) and other teams’ agents (404); nothing changes', async () => {
      const agent = await createAgent({ name: 'Guarded chat' });
      await json(await cli('PUT', `/agents/${agent.id}/connections/chat`, { body: chat }), 200);
      const rows = () =>
        db().selectFrom('agent_integrations').selectAll().where('agent_id', '=', agent.id).execute();
      const before = await rows();
      await json(
        await cli('PUT', `/agents/${agent.id}/connections/chat`, { body: { bot_token: 'only' } }),
        422,
      );
      await json(await cli('PUT', `/agents/${agent.id}/connections/meeting`, { body: {} }), 422);
      await json(
        await cli('PUT', `/agents/${agent.id}/connections/meeting`, {
          body: { bot_name: 'x', bot_image_url: 'nope' },
        }),
        422,
      );
      for (const [method, kind, body] of [
        ['PUT', 'chat', { ...chat, bot_token: 'xoxb-read-only' }],
        ['PUT', 'meeting', { bot_name: 'ro' }],
        ['DELETE', 'chat', undefined],
        ['DELETE', 'meeting', undefined],
      ] as const) {
        const path = `/agents/${agent.id}/connections/${kind}`;
        const refused = await cli(method, path, { body, token: readOnly });
        expect((await json<Detail>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
        const absent = await cli(method, `/agents/${outsider.agentId}/connections/${kind}`, { body });
        expect((await json<Detail>(absent, 404)).detail).toBe('Agent not found');
        await json(await cli(method, path, { body, token: null }), 401);
      }
      expect(await rows()).toEqual(before);
      expect(
        (await json<Detail>(await cli('GET', `/agents/${outsider.agentId}/connections`), 404)).detail,
      ).toBe('Agent not found');
    });
  });

  describe('team agent listing', () => {
    it('lists everything granted to the team, other members’ agents too, newest grant first, up to limit', async () => {
      const team = await newTeam('listing');
      const teammate = await user('teammate', { orgs: [[orgId, 'member']], teams: [[team.id, 'member']] });
      const a1 = await createAgent({ team_id: team.id, name: 'a1' });
      const b1 = await createAgent({ team_id: team.id, name: 'b1' }, teammate.token);
      const a2 = await createAgent({ team_id: team.id, name: 'a2' });
      const b2 = await createAgent({ team_id: team.id, name: 'b2' }, teammate.token);
      const list = (query = '', token?: string) =>
        cli('GET', `/orgs/${orgId}/teams/${team.id}/agents${query}`, { token });

      // The team is new: the admin's credential, resolved with its memberships per request, reaches it.
      await json(await cli('GET', `/agents/${a1.id}`), 200);
      const all = await json<{ items: (ControlAgent & { granted_at: string })[] }>(await list(), 200);
      expect(all.items.map((a) => a.id)).toEqual([b2.id, a2.id, b1.id, a1.id]);
      expect(all.items[0]).toEqual({ ...b2, granted_at: b2.created_at });
      // The teammate sees the same list.
      expect(await json(await list('', teammate.token), 200)).toEqual(all);
      expect(
        (await json<{ items: { id: string }[] }>(await list('?limit=2'), 200)).items.map((a) => a.id),
      ).toEqual([b2.id, a2.id]);

      // An agent of another team granted to this one lists first (the newest grant), and has access.
      const { agent_id: elsewhere } = await json<{ agent_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ instructions: 'granted' }) },
        }),
        201,
      );
      expect(await agentHasTeamAccess(db(), elsewhere, team.id)).toBe(false);
      expect(await agentHasTeamAccess(db(), elsewhere, teamId)).toBe(true);
      await grantAgentToTeam(db(), { team_id: team.id, agent_id: elsewhere, granted_at: timestamp() });
      expect(await agentHasTeamAccess(db(), elsewhere, team.id)).toBe(true);
      const granted = await json<{ items: { id: string; team_id: string }[] }>(await list('?limit=3'), 200);
      expect(granted.items.map((a) => a.id)).toEqual([elsewhere, b2.id, a2.id]);
      expect(granted.items[0]!.team_id).toBe(teamId);
      for (const limit of ['0', '1001', 'many']) await json(await list(`?limit=${limit}`), 422);
    });

    it('answers at most 200 agents by default', async () => {
      const team = await newTeam('crowded');
      const admin = await db()
        .selectFrom('users')
        .select('id')
        .where('username', '=', 'admin')
        .executeTakeFirstOrThrow();
      await server.paddock.services.store.transaction(async (trx) => {
        for (let i = 0; i < 205; i++) {
          const at = timestamp();
          await insertOrFindAgent(trx, {
            id: newId(),
            team_id: team.id,
            owner_user_id: admin.id,
            spec_hash: `hash-${i}`,
            title: `bulk ${i}`,
            harness: 'coding_alpha',
            machine_kind: 'sandbox_a',
            machine_size: 'S',
            model: null,
            instructions: null,
            entrypoint: null,
            mcp_servers: '[]',
            skills: '[]',
            secrets_enc: null,
            created_at: at,
            updated_at: at,
          });
        }
      });
      const page = await json<{ items: { name: string }[] }>(
        await cli('GET', `/orgs/${orgId}/teams/${team.id}/agents`),
        200,
      );
      expect(page.items).toHaveLength(200);
      expect(page.items[0]!.name).toBe('bulk 204');
    });

    it('checks team membership on top of organization membership, and refuses resource-bound credentials', async () => {
      const team = await newTeam('private');
      const path = `/orgs/${orgId}/teams/${team.id}/agents`;
      const orgOnly = await user('org-only', { orgs: [[orgId, 'member']], teams: [[teamId, 'member']] });
      expect(
        (await json<CodeDetail>(await cli('GET', path, { token: orgOnly.token }), 403)).detail.code,
      ).toBe('forbidden');
      expect((await json<Detail>(await cli('GET', path, { token: outsider.token }), 404)).detail).toBe(
        'Organization not found',
      );
      const wrongOrg = `/orgs/${outsider.orgId}/teams/${team.id}/agents`;
      expect((await json<Detail>(await cli('GET', wrongOrg, { token: outsider.token }), 404)).detail).toBe(
        'Team not found',
      );
      await json(await cli('GET', path, { token: null }), 401);
      await json(await cli('GET', path, { token: readOnly }), 200);

      // Agent-bound and thread-bound credentials: 403 with the credential_scope_denied object.
      const agent = await createAgent({ name: 'bound' });
      const key = await json<{ key: string }>(
        await cli('POST', `/agents/${agent.id}/keys`, { body: {} }),
        201,
      );
      const threadId = await createIdleThread(server);
      const threadToken = await sandboxToken(server, threadId);
      expect(threadToken).toMatch(/^pdk_thr_/);
      for (const token of [key.key, threadToken]) {
        const refused = await json<CodeDetail>(
          await cli('GET', `/orgs/${orgId}/teams/${teamId}/agents`, { token }),
          403,
        );
        expect(refused.detail.code).toBe('credential_scope_denied');
      }
      // Elsewhere an agent key reaches its own agent (and its secrets), not another.
      await json(await cli('GET', `/agents/${agent.id}`, { token: key.key }), 200);
      await json(await cli('GET', `/agents/${agent.id}/secrets`, { token: key.key }), 200);
      await json(await cli('GET', `/agents/${outsider.agentId}`, { token: key.key }), 404);
      // A sandbox's thread token cannot rewrite its agent.
      const { agent_id } = await json<{ agent_id: string }>(
        await server.request('GET', `/v2/threads/${threadId}`),
        200,
      );
      const sandboxPut = await cli('PUT', `/agents/${agent_id}/secrets`, {
        body: { secrets: {} },
        token: threadToken,
      });
      expect((await json<CodeDetail>(sandboxPut, 403)).detail.code).toBe('forbidden');
    });

    it('grants every agent to its own team: at creation on both surfaces, and by the migration for older ones', async () => {
      const { agent_id } = await json<{ agent_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ instructions: 'old agent' }) },
        }),
        201,
      );
      const listed = async () =>
        (
          await json<{ items: { id: string }[] }>(
            await cli('GET', `/orgs/${orgId}/teams/${teamId}/agents?limit=1000`),
            200,
          )
        ).items.map((a) => a.id);
      expect(await listed()).toContain(agent_id);
      // An agent from before grants existed: the migration's backfill grants it as of its creation.
      await db().deleteFrom('team_agent_grants').where('agent_id', '=', agent_id).execute();
      expect(await listed()).not.toContain(agent_id);
      await backfillOwnTeamGrants(db());
      expect(await listed()).toContain(agent_id);
      const grant = await db()
        .selectFrom('team_agent_grants')
        .selectAll()
        .where('agent_id', '=', agent_id)
        .executeTakeFirstOrThrow();
      expect(grant).toEqual({ team_id: teamId, agent_id, granted_at: (await rawAgent(agent_id)).created_at });
    });
  });

  it('answers the same under /api/cli as under /v2/cli', async () => {
    const agent = await createAgent({ name: 'Both prefixes' });
    const viaV2 = await json(await cli('GET', `/agents/${agent.id}`), 200);
    expect(await json(await server.request('GET', `/api/cli/agents/${agent.id}`), 200)).toEqual(viaV2);
    const refused = await server.request('PUT', `/api/cli/agents/${agent.id}/secrets`, {
      body: { secrets: { A: 'b' } },
      token: readOnly,
    });
    expect((await json<Detail>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
  });
});

describe.each(testDatabases())('control-plane agent create and provider policy on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
    writeFileSync(
      path,
      'providers:\n  sandbox_a: { enabled: true }\n  sandbox_b: { enabled: true }\n' +
        '  sandbox_c: { enabled: true, rollout: { orgs: [], users: [] } }\n',
    );
    server = await startControlPlaneServer(database, { PADDOCK_CONFIG: path });
  });
  afterAll(() => server.close());

  it('applies D4’s checks in order: runtime 422, switched off 503, unavailable 503, rollout 403', async () => {
    const orgs = await json<{ items: { id: string }[] }>(await server.request('GET', '/v2/cli/orgs'), 200);
    const teams = await json<{ items: { id: string }[] }>(
      await server.request('GET', `/v2/cli/orgs/${orgs.items[0]!.id}/teams`),
      200,
    );
    const create = (machine_kind: string, harness = 'coding_alpha') =>
      server.request('POST', '/v2/cli/agents', {
        body: { team_id: teams.items[0]!.id, name: `${machine_kind}-${harness}`, machine_kind, harness },
      });
    const code = async (response: Response, status: number) =>
      (await json<CodeDetail>(response, status)).detail.code;
    // Outside the rollout and wrong runtime: the runtime is refused first.
    expect(await code(await create('sandbox_c', 'knowledge_cloud'), 422)).toBe('runtime_not_supported');
    expect(await code(await create('sandbox_d'), 503)).toBe('provider_disabled');
    expect(await code(await create('sandbox_b'), 503)).toBe('provider_unavailable');
    expect(await code(await create('sandbox_c'), 403)).toBe('provider_not_in_rollout');
    const before = await server.paddock.services.store.db.selectFrom('agents').select('id').execute();
    expect(before).toHaveLength(0);
    await json(await create('sandbox_a', 'knowledge_cloud'), 201);
  });
});

async function login(server: TestServer): Promise<string> {
  const answer = await json<{ access_token: string }>(
    await server.request('POST', '/v2/auth/login', {
      body: { username: 'admin', password: 'test-password' },
      token: null,
    }),
    200,
  );
  return answer.access_token;
}
