import { createClient, type PaddockClient, PaddockError } from '@paddock/sdk';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The control plane's own tests run on both stores; here the client's calls are the subject.
describe.each(testDatabases().slice(0, 1))(
  'the SDK’s control plane against a server on $name',
  (database) => {
    let server: TestServer;
    let client: PaddockClient;
    beforeAll(async () => {
      server = await startTestServer(database);
      client = createClient({ baseUrl: server.url, token: server.token });
    });
    afterAll(() => server.close());

    it('manages a team’s agent: create, update, manifest and revision, secrets, keys', async () => {
      const [org] = (await client.cli.orgs.list()).items;
      expect(org).toMatchObject({ id: expect.any(String), role: expect.any(String) });
      const team = await client.cli.teams.create(org!.id, 'sdk team');
      expect((await client.cli.teams.list(org!.id)).items.map((t) => t.id)).toContain(team.id);

      const created = await client.cli.agents.create({ team_id: team.id, name: 'sdk agent' });
      expect(created).toMatchObject({ team_id: team.id, name: 'sdk agent', network: 'registries' });
      const updated = await client.cli.agents.update(created.id, { tagline: 'typed', network: 'none' });
      expect(updated).toMatchObject({ tagline: 'typed', network: 'none' });
      expect((await client.cli.teams.agents(org!.id, team.id)).items.map((a) => a.id)).toEqual([created.id]);

      const before = (await client.cli.agents.revision(created.id)).revision;
      const manifest = await client.cli.agents.manifest(created.id);
      expect(manifest.revision).toBe(before);

      await client.cli.agents.setSecrets(created.id, { API_KEY: 'secret-value' });
      expect((await client.cli.agents.secrets(created.id)).secrets).toEqual({ API_KEY: 'secret-value' });
      expect((await client.cli.agents.revision(created.id)).revision).not.toBe(before);

      const key = await client.cli.agents.createKey(created.id, 'ci');
      expect(key.key).toBeTruthy();
      expect((await client.cli.agents.keys(created.id)).items.map((k) => k.id)).toEqual([key.id]);
      await client.cli.agents.revokeKey(key.id);
      expect((await client.cli.agents.keys(created.id)).items).toEqual([]);

      expect((await client.cli.agents.connections(created.id)).items).toEqual(expect.any(Array));
      expect((await client.cli.agents.mcpServers(created.id)).items).toEqual([]);
      expect((await client.cli.agents.evals(created.id)).items).toEqual([]);
      expect((await client.cli.agents.evalRuns(created.id)).items).toEqual([]);

      const orchestration = await client.cli.orchestrations.create({
        team_id: team.id,
        name: 'pair',
        members: [{ agent_id: created.id, role: 'lead' }],
      });
      const renamed = await client.cli.orchestrations.update(orchestration.id, {
        name: 'pair 2',
        base_revision: orchestration.revision,
      });
      expect(renamed.name).toBe('pair 2');
      expect((await client.cli.orchestrations.list(org!.id, team.id)).items.map((o) => o.id)).toEqual([
        orchestration.id,
      ]);
      const stale = await client.cli.orchestrations
        .update(orchestration.id, { name: 'again', base_revision: orchestration.revision })
        .catch((error: unknown) => error);
      expect(stale).toBeInstanceOf(PaddockError);
      expect(stale).toMatchObject({ status: 409, retryable: false });
    });

    it('mints, renames and revokes a personal access token (in a login session), refused at once', async () => {
      const session = await client.cli.login('admin', 'test-password');
      const signedIn = createClient({ baseUrl: server.url, token: session.access_token });
      const minted = await signedIn.cli.tokens.create({ name: 'laptop', scopes: 'read,publish' });
      expect(minted).toMatchObject({ name: 'laptop', scopes: ['read', 'publish'] });
      const own = createClient({ baseUrl: server.url, token: minted.token });
      expect((await own.cli.orgs.list()).items.length).toBeGreaterThan(0);
      expect(await signedIn.cli.tokens.rename(minted.id, 'desktop')).toMatchObject({ name: 'desktop' });
      expect((await signedIn.cli.tokens.list()).items.find((t) => t.id === minted.id)).toMatchObject({
        name: 'desktop',
      });
      await signedIn.cli.tokens.revoke(minted.id);
      const refused = await own.cli.orgs.list().catch((error: unknown) => error);
      expect(refused).toMatchObject({ status: 401, code: 'invalid_token', retryable: false });
    });

    it('logs in with the built-in login and calls with the session token', async () => {
      const session = await client.cli.login('admin', 'test-password');
      expect(session.token_type).toBe('bearer');
      const asSession = createClient({ baseUrl: server.url, token: session.access_token });
      expect((await asSession.cli.orgs.list()).items.length).toBeGreaterThan(0);
      const wrong = await client.cli.login('admin', 'not-the-password').catch((error: unknown) => error);
      expect(wrong).toMatchObject({ status: 401, code: 'invalid_credentials' });
    });
  },
);
