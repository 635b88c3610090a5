import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createClient, type PaddockClient } from '@paddock/sdk';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const bin = resolve(import.meta.dirname, '../bin/paddock.js');

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe.each(testDatabases().slice(0, 1))(
  'paddock link, status, sync, pull, unlink on $name',
  (database) => {
    let server: TestServer;
    let dir: string;
    let env: Record<string, string>;
    let client: PaddockClient;
    let teamId: string;

    /** The program as a subprocess (stdin is not a terminal). */
    function cli(args: string[], extraEnv: Record<string, string | undefined> = {}, cwd = dir): Promise<Ran> {
      const child = spawn(process.execPath, [bin, ...args], {
        cwd,
        env: { ...env, ...extraEnv } as NodeJS.ProcessEnv,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const ran: Ran = { code: null, stdout: '', stderr: '' };
      child.stdout.on('data', (chunk: Buffer) => (ran.stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (ran.stderr += chunk.toString('utf8')));
      return new Promise((done) => child.on('close', (code) => done({ ...ran, code })));
    }
    const ok = async (args: string[], cwd?: string) => {
      const ran = await cli(args, {}, cwd);
      expect(ran.code, `paddock ${args.join(' ')}\n${ran.stderr}`).toBe(0);
      return ran;
    };
    // biome-ignore lint/suspicious/noExplicitAny: parsed CLI output
    const json = async (args: string[], cwd?: string): Promise<any> =>
      JSON.parse((await ok(['--json', ...args], cwd)).stdout);
    const text = (path: string) => readFile(path, 'utf8');

    async function newAgent(name: string) {
      const agent = await client.cli.agents.create({ team_id: teamId, name, tagline: 'first' });
      const { revision } = await client.cli.agents.revision(agent.id);
      await client.cli.agents.publish(agent.id, {
        base_revision: revision,
        components: [
          {
            type: 'instructions',
            name: 'instructions',
            files: [{ path: 'instructions.md', content: 'Be helpful.\n' }],
          },
          {
            type: 'playbook',
            name: 'triage',
            files: [{ path: 'steps.md', content: '1. Read the ticket.\n' }],
          },
          { type: 'eval', name: 'basic', files: [{ path: 'criteria.md', content: 'Answers politely.\n' }] },
        ],
      });
      return agent;
    }
    const active = async (agentId: string) =>
      (await client.cli.agents.manifest(agentId)).components.filter((c) => c.status !== 'archived');

    beforeAll(async () => {
      server = await startTestServer(database);
      dir = await mkdtemp(join(tmpdir(), 'paddock-link-'));
      env = {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        XDG_CONFIG_HOME: join(dir, 'config'),
        NO_COLOR: '1',
        SERVICE_TOKEN: server.token,
        PADDOCK_URL: server.url,
      };
      client = createClient({ baseUrl: server.url, token: server.token });
      const [org] = (await client.cli.orgs.list()).items;
      teamId = (await client.cli.teams.list(org!.id)).items[0]!.id;
    });
    afterAll(async () => {
      await server?.close();
      await rm(dir, { recursive: true, force: true });
    });

    it('links a folder, shows local drift, plans and syncs the edit (visible through the API)', async () => {
      const agent = await newAgent('Support Bot');
      const linked = await json(['link', agent.id]); // default folder: the agent's name as a slug
      const folder = join(dir, 'support-bot');
      expect(linked).toMatchObject({ agent_id: agent.id, dir: folder });
      expect(await text(join(folder, 'instructions.md'))).toBe('Be helpful.\n');
      expect(await text(join(folder, 'playbooks/triage/steps.md'))).toBe('1. Read the ticket.\n');
      expect(await text(join(folder, 'evals/basic/criteria.md'))).toBe('Answers politely.\n');
      expect(await text(join(folder, 'agent.yaml'))).toMatch(/name: Support Bot[\s\S]*tagline: first/);
      const link = JSON.parse(await text(join(folder, '.paddock/link.json')));
      expect(link).toMatchObject({ agent_id: agent.id, base_revision: linked.revision });
      expect(link.base_revision).toBe((await client.cli.agents.revision(agent.id)).revision);
      expect(await json(['status'], folder)).toMatchObject({ local_changed: false, cloud_changed: false });

      // A non-empty folder that is not this agent's link is refused without --yes.
      const other = join(dir, 'other');
      await mkdir(other);
      await writeFile(join(other, 'notes.txt'), 'mine\n');
      const refused = await cli(['link', agent.id, other]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/not empty/);
      expect(await readdir(other)).toEqual(['notes.txt']);

      await writeFile(join(folder, 'instructions.md'), 'Be brief.\n');
      await mkdir(join(folder, 'playbooks/deploy'));
      await writeFile(join(folder, 'playbooks/deploy/run.md'), 'Ship it.\n');
      await rm(join(folder, 'evals'), { recursive: true });
      await writeFile(
        join(folder, 'agent.yaml'),
        (await text(join(folder, 'agent.yaml'))).replace('first', 'second'),
      );
      const status = await json(['status', '--dir', folder]);
      expect(status.local_drift).toEqual({
        added: ['playbooks/deploy/run.md'],
        changed: ['agent.yaml', 'instructions.md'],
        removed: ['evals/basic/criteria.md'],
      });
      expect(status.cloud_changed).toBe(false);

      const dry = await ok(['sync', '--dry-run'], folder);
      expect(dry.stdout).toContain('~ instructions instructions (change)');
      expect(dry.stdout).toContain('+ playbook deploy (add)');
      expect(dry.stdout).toContain('- eval basic (archive)');
      expect(dry.stdout).toContain('~ agent tagline: first → second');
      const noYes = await cli(['sync'], {}, folder); // stdin is not a terminal: no prompt
      expect(noYes.code).toBe(2);
      expect(noYes.stderr).toMatch(/--yes/);
      // On the legacy control plane, a default_model write is refused before sending.
      await writeFile(
        join(folder, 'agent.yaml'),
        `${await text(join(folder, 'agent.yaml'))}model: test-model-2\n`,
      );
      const legacy = await cli(
        ['sync', '--yes'],
        { PADDOCK_URL: undefined, SERVICE_API_URL: server.url },
        folder,
      );
      expect(legacy.code).toBe(1);
      expect(legacy.stderr).toMatch(/refused before sending: a declarative default_model write/);
      expect((await client.cli.agents.get(agent.id)).tagline).toBe('first');

      const synced = await json(['sync', '--yes'], folder);
      expect(synced).toMatchObject({ synced: true, plan: { agent: expect.any(Array) } });
      const components = await active(agent.id);
      expect(components.find((c) => c.type === 'instructions')?.files[0]?.content).toBe('Be brief.\n');
      expect(components.find((c) => c.type === 'playbook' && c.name === 'deploy')).toBeDefined();
      expect(components.find((c) => c.type === 'eval')).toBeUndefined(); // archived
      expect(await client.cli.agents.get(agent.id)).toMatchObject({
        tagline: 'second',
        default_model: 'test-model-2',
      });
      expect(JSON.parse(await text(join(folder, '.paddock/link.json'))).base_revision).toBe(synced.revision);
      expect(await json(['status'], folder)).toMatchObject({ local_changed: false, cloud_changed: false });
    });

    it('shows cloud drift, refuses a conflicting sync with 409 advice, pulls the cloud change, unlinks', async () => {
      const agent = await newAgent('drifter');
      const folder = join(dir, 'drift');
      await json(['link', agent.id, folder]);
      const { revision } = await client.cli.agents.revision(agent.id);
      await client.cli.agents.publish(agent.id, {
        base_revision: revision,
        reconcile_playbooks: true,
        reconcile_evals: true,
        components: [
          {
            type: 'instructions',
            name: 'instructions',
            files: [{ path: 'instructions.md', content: 'From the cloud.\n' }],
          },
        ],
      });
      const status = await json(['status'], folder);
      expect(status).toMatchObject({ cloud_changed: true, local_changed: false, base_revision: revision });
      expect((await ok(['status'], folder)).stdout).toMatch(
        /cloud: changed since the base revision.*paddock pull/,
      );

      await writeFile(join(folder, 'instructions.md'), 'From the folder.\n');
      const conflict = await cli(['sync', '--yes'], {}, folder);
      expect(conflict.code).toBe(1);
      expect(conflict.stderr).toMatch(/409/);
      expect(conflict.stderr).toMatch(/paddock pull/);
      expect(conflict.stdout).not.toContain('Synced');
      expect((await active(agent.id)).find((c) => c.type === 'instructions')?.files[0]?.content).toBe(
        'From the cloud.\n',
      );

      const keep = await cli(['pull'], {}, folder);
      expect(keep.code).toBe(1); // it would drop the local edit
      expect(await text(join(folder, 'instructions.md'))).toBe('From the folder.\n');
      const pulled = await json(['pull', '--force'], folder);
      expect(pulled.removed).toEqual(
        expect.arrayContaining(['playbooks/triage/steps.md', 'evals/basic/criteria.md']),
      );
      expect(await text(join(folder, 'instructions.md'))).toBe('From the cloud.\n');
      expect(await json(['status'], folder)).toMatchObject({ local_changed: false, cloud_changed: false });

      expect(await json(['unlink'], folder)).toMatchObject({ agent_id: agent.id, unlinked: true });
      await expect(stat(join(folder, '.paddock'))).rejects.toThrow();
      expect(await text(join(folder, 'instructions.md'))).toBe('From the cloud.\n');
      expect((await cli(['status'], {}, folder)).code).toBe(1);
    });

    it('refuses a manifest whose names would write outside the folder, writing nothing', async () => {
      const agent = await client.cli.agents.create({ team_id: teamId, name: 'escaper' });
      const { revision } = await client.cli.agents.revision(agent.id);
      await client.cli.agents.publish(agent.id, {
        base_revision: revision,
        components: [
          { type: 'playbook', name: '../../escaped', files: [{ path: 'x.md', content: 'out\n' }] },
        ],
      });
      const folder = join(dir, 'nest', 'escaper');
      const ran = await cli(['--json', 'link', agent.id, folder]);
      expect(ran.code).toBe(1);
      expect(ran.stdout).toBe('');
      expect(ran.stderr).toMatch(/refused: playbook name "..\/..\/escaped"/);
      await expect(stat(join(dir, 'escaped'))).rejects.toThrow();
      await expect(stat(join(folder, 'agent.yaml'))).rejects.toThrow();
    });
  },
);
