import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { describe, expect, it } from 'vitest';
import { controlPlaneHarness } from './control-plane-harness.ts';

/** The tests that run the program a dozen times or more: each start takes a second or two on a busy machine. */
const cliTimeoutMs = 90_000;

describe.each(testDatabases().slice(0, 1))(
  'paddock: an agent’s secrets, keys, connections, evals; orchestrations, skills on $name',
  (database) => {
    const h = controlPlaneHarness(database);
    const { cli, ok, json, printed } = h;

    it(
      'secrets are set from stdin or a flag and never printed; keys are shown once',
      async () => {
        const agent = await json(['agent', 'create', '--team', 'default', '--name', 'secretive']);
        const value = `s3cret-${Date.now()}-value`;
        expect(await json(['secret', 'set', agent.id, 'API_KEY'], `${value}\n`)).toEqual({
          set: 'API_KEY',
          names: ['API_KEY'],
        });
        await ok(['secret', 'set', agent.id, 'OTHER', '--value', `${value}-2`]);
        expect(await json(['secret', 'list', agent.id])).toEqual({ names: ['API_KEY', 'OTHER'] });
        expect((await ok(['secret', 'list', agent.id])).stdout).toBe('API_KEY\nOTHER\n');
        // Stored as given (the control plane's owner may read it back through the API).
        const stored = (await (
          await h.server.request('GET', `/v2/cli/agents/${agent.id}/secrets`)
        ).json()) as {
          secrets: Record<string, string>;
        };
        expect(stored.secrets.API_KEY).toBe(value);
        expect((await cli(['secret', 'delete', agent.id, 'OTHER'])).code).toBe(2);
        expect(await json(['secret', 'delete', agent.id, 'OTHER', '--yes'])).toEqual({
          deleted: 'OTHER',
          names: ['API_KEY'],
        });
        expect((await cli(['secret', 'set', agent.id, 'bad name!'], {}, 'x')).code).toBe(2);
        expect(printed.join('\n')).not.toContain(value);

        const key = await json(['key', 'create', agent.id, '--name', 'deploy']);
        expect(key).toMatchObject({ name: 'deploy', agent_id: agent.id });
        expect(key.key.length).toBeGreaterThan(16);
        const keys = await json(['key', 'list', agent.id]);
        expect(keys.items).toEqual([expect.objectContaining({ id: key.id, prefix: key.prefix })]);
        expect(JSON.stringify(keys)).not.toContain(key.key);
        expect(await json(['key', 'revoke', key.id, '--yes'])).toEqual({ revoked: key.id });
        expect((await json(['key', 'list', agent.id])).items).toEqual([]);
      },
      cliTimeoutMs,
    );

    it(
      'connections, the MCP report, evals and harnesses',
      async () => {
        const agent = await json(['agent', 'create', '--team', 'default', '--name', 'connected']);
        const connections = await json(['connection', 'list', agent.id]);
        expect(connections.items.map((c: { kind: string }) => c.kind)).toEqual(
          expect.arrayContaining(['chat', 'meeting']),
        );
        const meeting = await cli(['--json', 'connection', 'meeting', agent.id, '--bot-name', 'Notetaker']);
        if (meeting.code === 0) {
          expect(JSON.parse(meeting.stdout)).toMatchObject({ kind: 'meeting', connected: true });
          expect(await json(['connection', 'disconnect', agent.id, 'meeting', '--yes'])).toEqual({
            disconnected: 'meeting',
          });
        } else {
          expect(meeting.code, meeting.stderr).toBe(1); // a deployment without a meeting provider refuses
          expect(meeting.stderr).toMatch(/HTTP \d{3}/);
        }
        const botToken = `xoxb-${Date.now()}-bot-token`;
        const chat = await json(
          ['connection', 'chat', agent.id, '--signing-secret', 'signing-secret-1', '--app-name', 'Helper'],
          `${botToken}\n`,
        );
        expect(chat).toMatchObject({ kind: 'chat', connected: true, app_name: 'Helper' });
        const afterChat = await json(['connection', 'list', agent.id]);
        expect(afterChat.items.find((c: { kind: string }) => c.kind === 'chat')).toMatchObject({
          connected: true,
        });
        expect((await ok(['connection', 'list', agent.id])).stdout).toContain('Helper');
        expect((await cli(['connection', 'disconnect', agent.id, 'chat'])).code).toBe(2); // needs --yes off a terminal
        expect(await json(['connection', 'disconnect', agent.id, 'chat', '--yes'])).toEqual({
          disconnected: 'chat',
        });
        expect(printed.join('\n')).not.toContain(botToken);
        expect((await cli(['connection', 'disconnect', agent.id, 'fax', '--yes'])).code).toBe(2);
        expect((await cli(['connection', 'meeting', agent.id])).code).toBe(2); // --bot-name is required

        expect(await json(['mcp', agent.id])).toEqual({ items: [] });
        expect(await json(['eval', 'list', agent.id])).toEqual({ items: [] });
        expect(await json(['eval', 'runs', agent.id])).toEqual({ items: [] });
        const run = await cli(['eval', 'run', agent.id, '--task', '00000000-0000-4000-8000-000000000000']);
        expect(run.code, run.stderr).toBe(1);
        expect(run.stderr).toMatch(/HTTP 4\d\d/);
        expect((await cli(['eval', 'run', agent.id])).code).toBe(2);

        const harnesses = await json(['harnesses']);
        expect(harnesses.items.length).toBeGreaterThan(0);
        expect(harnesses.items[0]).toHaveProperty('abilities');
      },
      cliTimeoutMs,
    );

    it('orchestrations: create, list, get, update (a stale base revision refused)', async () => {
      const a = await json(['agent', 'create', '--team', 'default', '--name', 'orch-a']);
      const b = await json(['agent', 'create', '--team', 'default', '--name', 'orch-b']);
      const created = await json([
        'orchestration',
        'create',
        '--team',
        'default',
        '--name',
        'pipeline',
        '--member',
        `${a.id}:planner`,
        '--member',
        b.id,
        '--edge',
        `${a.id}:${b.id}`,
      ]);
      expect(created).toMatchObject({
        name: 'pipeline',
        members: [
          { agent_id: a.id, role: 'planner' },
          { agent_id: b.id, role: null },
        ],
        edges: [{ from: a.id, to: b.id }],
      });
      const listed = await json(['orchestration', 'list', '--team', 'default']);
      expect(listed.items.map((o: { id: string }) => o.id)).toContain(created.id);
      expect(await json(['orchestration', 'get', created.id])).toMatchObject({ id: created.id });
      const file = join(h.dir, 'orch.yaml');
      await writeFile(file, `name: from-file\nedges: []\n`);
      const updated = await json([
        'orchestration',
        'update',
        created.id,
        '-f',
        file,
        '--base-revision',
        created.revision,
      ]);
      expect(updated).toMatchObject({ name: 'from-file', edges: [] });
      const stale = await cli([
        'orchestration',
        'update',
        created.id,
        '--name',
        'x',
        '--base-revision',
        created.revision,
      ]);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toMatch(/HTTP 409/);
      expect((await cli(['orchestration', 'update', created.id, '--edge', 'nocolon'])).code).toBe(2);
      expect((await ok(['orchestration', 'get', created.id])).stdout).toContain('from-file');
    });

    it('skills: publish a folder, list the creator’s skills', async () => {
      const skill = join(h.dir, 'greeter');
      await mkdir(join(skill, 'scripts'), { recursive: true });
      await writeFile(
        join(skill, 'SKILL.md'),
        '---\nname: greeter\ndescription: Says hello.\n---\nSay hello.\n',
      );
      await writeFile(join(skill, 'scripts', 'hi.sh'), 'echo hi\n');
      const published = await json(['skills', 'publish', skill, '1.0.0']);
      expect(published).toMatchObject({ creator: 'default', slug: 'greeter', version: '1.0.0' });
      expect(published.files.sort()).toEqual(['SKILL.md', 'scripts/hi.sh']);
      const listed = await json(['skills', 'list']);
      expect(listed.items).toEqual([expect.objectContaining({ slug: 'greeter', latest: '1.0.0' })]);
      expect((await cli(['skills', 'publish', skill])).code).toBe(2); // the version is required
    });
  },
);
