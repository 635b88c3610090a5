import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { describe, expect, it } from 'vitest';
import { controlPlaneHarness } from './control-plane-harness.ts';

describe.each(testDatabases().slice(0, 1))(
  'paddock login, tokens, organizations, teams, agents on $name',
  (database) => {
    const h = controlPlaneHarness(database);
    const { cli, ok, json, printed } = h;

    it('login keeps a 0600 session the token commands use; the minted token is saved, not read back', async () => {
      const wrong = await cli(['login', '--username', 'admin'], {}, 'not-the-password\n');
      expect(wrong.code).toBe(1);
      expect(wrong.stderr).toMatch(/HTTP 401/);
      const noName = await cli(['login'], {}, 'test-password\n');
      expect(noName.code).toBe(2); // stdin is not a terminal: nothing prompts

      const session = await json(['login', '--username', 'admin'], 'test-password\n');
      expect(session).toMatchObject({ username: 'admin', url: h.server.url });
      expect((await stat(session.session_file)).mode & 0o777).toBe(0o600);
      expect(printed.join('')).not.toContain('test-password');

      // Without a session token, `token` commands fail; with it, they work even with SERVICE_TOKEN unset.
      const created = await json(['token', 'create', '--name', 'ci', '--scopes', 'read,publish']);
      expect(created).toMatchObject({ name: 'ci', scopes: ['read', 'publish'] });
      expect(created.token).toMatch(/^pdk_/);
      expect((await readFile(created.saved_to, 'utf8')).trim()).toBe(created.token);
      expect((await stat(created.saved_to)).mode & 0o777).toBe(0o600);
      const listed = await json(['token', 'list']);
      expect(listed.items.map((t: { id: string }) => t.id)).toContain(created.id);
      expect(JSON.stringify(listed)).not.toContain(created.token);
      const human = await ok(['token', 'list']);
      expect(human.stdout).toContain('ci');
      expect(await json(['token', 'rename', created.id, 'ci-2'])).toMatchObject({
        id: created.id,
        name: 'ci-2',
      });

      // The control-plane commands never read the saved token: without SERVICE_TOKEN they refuse (usage).
      const noToken = await cli(['orgs'], { SERVICE_TOKEN: undefined });
      expect(noToken.code).toBe(2);
      expect(noToken.stderr).toContain('SERVICE_TOKEN');
      // The minted token works when given as SERVICE_TOKEN.
      const asEnv = await cli(['--json', 'orgs'], { SERVICE_TOKEN: created.token });
      expect(asEnv.code, asEnv.stderr).toBe(0);

      const refused = await cli(['token', 'revoke', created.id]);
      expect(refused.code).toBe(2); // a confirmation, and stdin is not a terminal
      expect(await json(['token', 'revoke', created.id, '--yes'])).toEqual({ revoked: created.id });
      const revoked = await cli(['orgs'], { SERVICE_TOKEN: created.token });
      expect(revoked.code).toBe(1);

      expect(await json(['logout'])).toEqual({ logged_out: true });
      const after = await cli(['token', 'list']);
      expect(after.code).toBe(1);
      expect(after.stderr).toContain('paddock login');
    });

    it('orgs, teams and agents: list, create, get, update from flags and agent.yaml', async () => {
      const orgs = await json(['orgs']);
      expect(orgs.items).toEqual([expect.objectContaining({ name: 'default' })]);
      const team = await json(['team', 'create', 'cli-team']);
      expect(team).toMatchObject({ name: 'cli-team', org_id: orgs.items[0].id });
      const teams = await json(['team', 'list']);
      expect(teams.items.map((t: { name: string }) => t.name).sort()).toEqual(['cli-team', 'default']);
      // Two teams now: which one is a usage error.
      expect((await cli(['agent', 'list'])).code).toBe(2);

      const yamlFile = join(h.dir, 'agent.yaml');
      await writeFile(yamlFile, 'name: yaml-agent\ntagline: from a file\nmemory_enabled: true\n');
      const fromYaml = await json([
        'agent',
        'create',
        '--team',
        'cli-team',
        '-f',
        yamlFile,
        '--tagline',
        'flag wins',
      ]);
      expect(fromYaml).toMatchObject({
        name: 'yaml-agent',
        tagline: 'flag wins',
        memory_enabled: true,
        team_id: team.id,
      });
      const fromFlags = await json([
        'agent',
        'create',
        '--team',
        'cli-team',
        '--name',
        'flag-agent',
        '--no-browser',
      ]);
      expect(fromFlags).toMatchObject({ name: 'flag-agent', browser_enabled: false });

      const listed = await json(['agent', 'list', '--team', team.id]);
      expect(listed.items.map((a: { name: string }) => a.name).sort()).toEqual(['flag-agent', 'yaml-agent']);
      expect(await json(['agent', 'get', fromYaml.id])).toMatchObject({
        id: fromYaml.id,
        name: 'yaml-agent',
      });
      const updated = await json(['agent', 'update', fromYaml.id, '--name', 'renamed', '--no-memory']);
      expect(updated).toMatchObject({ name: 'renamed', memory_enabled: false, tagline: 'flag wins' });
      const human = await ok(['agent', 'list', '--team', 'cli-team']);
      expect(human.stdout).toMatch(/renamed/);

      // The service's refusal: exit 1 with its detail.
      const missing = await cli(['agent', 'get', '00000000-0000-4000-8000-000000000000']);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/HTTP 404/);
      // Usage errors: exit 2.
      expect((await cli(['agent', 'update', fromYaml.id])).code).toBe(2);
      expect((await cli(['agent', 'get'])).code).toBe(2);
      expect((await cli(['agent', 'frobnicate'])).code).toBe(2);
      expect(
        (await cli(['agent', 'create', '--team', 'cli-team', '-f', join(h.dir, 'nope.yaml')])).code,
      ).toBe(2);
    });

    it('legacy control plane: machine_kind, default_model and orchestration writes are refused before sending', async () => {
      // Nothing listens on this port: a refusal that sent anything would fail to connect instead.
      const legacy = { SERVICE_API_URL: 'http://127.0.0.1:9', PADDOCK_URL: undefined };
      const writes = [
        ['agent', 'create', '--team', 'x', '--machine-kind', 'sandbox_a'],
        ['agent', 'update', '00000000-0000-4000-8000-000000000000', '--model', 'some-model'],
        ['orchestration', 'create', '--team', 'x', '--name', 'o'],
      ];
      for (const args of writes) {
        const ran = await cli(args, legacy);
        expect(ran.code, ran.stderr).toBe(1);
        expect(ran.stderr).toContain('refused before sending');
        expect(ran.stderr).toContain('legacy control plane');
      }
    });
  },
);
