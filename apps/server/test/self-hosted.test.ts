import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mintToken } from '@paddock/core';
import type { Scope } from '@paddock/protocol';
import { runnerLinkPath } from '@paddock/sandbox';
import { openStore, type Store } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

/**
 * sandbox_e: a self-hosted runner in a network namespace of its own (as on a user's machine),
 * reaching the server only over a veth pair, with its own data dir and an agent's token.
 */
describe.each(testDatabases())('self-hosted runners ($name)', (database) => {
  const n = ((process.pid * 2 + (database.name === 'postgres' ? 1 : 0)) % 250) + 1;
  const ns = `pdk-sh-${process.pid}-${database.name}`;
  const veth = `pdkh${process.pid % 100_000}${database.name[0]}`;
  const hostIp = `10.200.${n}.1`;
  const runnerDir = mkdtempSync(join(tmpdir(), 'paddock-self-hosted-'));
  let deployment: Deployment;
  let store: Store;
  let admin: string;

  const ip = (...args: string[]) => execFileSync('ip', args, { stdio: 'pipe' });

  beforeAll(async () => {
    ip('netns', 'add', ns);
    ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', `${veth}n`);
    ip('link', 'set', `${veth}n`, 'netns', ns);
    ip('addr', 'add', `${hostIp}/24`, 'dev', veth);
    ip('link', 'set', veth, 'up');
    ip('-n', ns, 'addr', 'add', `10.200.${n}.2/24`, 'dev', `${veth}n`);
    ip('-n', ns, 'link', 'set', `${veth}n`, 'up');
    ip('-n', ns, 'link', 'set', 'lo', 'up');
    const config = join(runnerDir, 'paddock.yaml');
    writeFileSync(config, 'providers:\n  sandbox_e: { enabled: true }\n');
    deployment = await startDeployment(
      database,
      { PADDOCK_CONFIG: config, PADDOCK_SELF_HOSTED_WAIT_MS: '1500' },
      hostIp,
    );
    await deployment.startServer();
    deployment.startRunner();
    await deployment.runnerConnected(1);
    store = await openStore({ databaseUrl: deployment.databaseUrl, dataDir: deployment.dataDir });
    admin = (
      await store.db
        .selectFrom('users')
        .select('id')
        .where('username', '=', 'admin')
        .executeTakeFirstOrThrow()
    ).id;
  }, 60_000);

  afterEach((context) => {
    if (context.task.result?.state !== 'fail') return;
    const lines = deployment.output().split('\n');
    console.error(lines.filter((line) => !/"(incoming request|request completed)"/.test(line)).join('\n'));
  });

  afterAll(async () => {
    await store?.close();
    await deployment?.close();
    for (const args of [
      ['netns', 'del', ns],
      ['link', 'del', veth],
    ]) {
      try {
        ip(...args);
      } catch {
        // Already gone (deleting the namespace takes the veth pair with it).
      }
    }
    rmSync(runnerDir, { recursive: true, force: true });
  });

  const newAgent = async (machineKind: string) =>
    (
      await json<{ agent_id: string }>(
        await deployment.request('POST', '/v2/threads', {
          // A title of its own: the same inline spec would name the same agent.
          body: {
            agent: agentSpec({ machine_kind: machineKind, harness: 'coding_alpha', title: randomUUID() }),
          },
        }),
        201,
      )
    ).agent_id;

  const agentToken = async (agentId: string, scopes: Scope[] = ['read', 'publish']) =>
    (await mintToken(store.db, { kind: 'agent', agentId, userId: admin, name: 'runner', scopes })).token;

  /** Runs one turn on a new thread of the agent; answers the thread and its events. */
  async function turn(agentId: string, input: string) {
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await deployment.request('POST', '/v2/threads', { body: { agent_id: agentId, input } }),
      201,
    );
    await settled(deployment, threadId, 30_000);
    return { threadId, events: await allEvents(deployment, threadId) };
  }

  /** The status a runner connecting with this bearer gets, or 101 when it is let in. */
  function linkStatus(bearer: string): Promise<number> {
    const socket = new WebSocket(`${deployment.url.replace(/^http/, 'ws')}${runnerLinkPath}`, {
      headers: { authorization: `Bearer ${bearer}` },
    });
    return new Promise((resolve, reject) => {
      socket.on('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.on('open', () => {
        socket.close();
        resolve(101);
      });
      socket.on('error', reject);
    });
  }

  const connections = () => (deployment.output().match(/"msg":"runner connected"/g) ?? []).length;

  async function waitFor(check: () => Promise<boolean>): Promise<void> {
    const until = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > until) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  function startSelfHosted(token: string) {
    return deployment.startRunner({
      name: 'self-hosted',
      // Only the network namespace: `ip netns exec` also remounts /sys, which hides the cgroups the
      // bubblewrap sandboxes' limits need (as a user's machine has them).
      prefix: ['nsenter', `--net=/run/netns/${ns}`],
      env: { PADDOCK_RUNNER_TOKEN: token, PADDOCK_DATA_DIR: runnerDir, PADDOCK_SERVER_URL: deployment.url },
    });
  }

  it('admits only a publish token of a sandbox_e agent, before the upgrade', async () => {
    const local = await newAgent('sandbox_a');
    const remote = await newAgent('sandbox_e');
    expect(await linkStatus(await agentToken(local))).toBe(403);
    expect(await linkStatus(await agentToken(remote, ['read']))).toBe(403);
    expect(await linkStatus(deployment.token)).toBe(403);
    expect(await linkStatus('pdk_live_not-a-token')).toBe(401);
    expect(await linkStatus(await agentToken(remote))).toBe(101);
  });

  it('fails the turn with runner_unavailable while no runner of the agent is connected', async () => {
    const agentId = await newAgent('sandbox_e');
    const { events } = await turn(agentId, '::sh echo hello');
    const error = events.find((e) => e.type === 'error')?.data as { code: string; message: string };
    expect(error.code).toBe('runner_unavailable');
    expect(error.message).toContain(agentId);
    expect(error.message).toContain('paddock runner');
  });

  it("runs a sandbox_e agent's turns on its runner in another network namespace, others on the server's", async () => {
    const agentId = await newAgent('sandbox_e');
    const other = await newAgent('sandbox_e');
    const runner = startSelfHosted(await agentToken(agentId));
    await deployment.runnerConnected(2);
    // The runner reaches the server from its own namespace: its address there is the veth's peer.
    expect(execFileSync('ip', ['-n', ns, '-o', 'addr', 'show', `${veth}n`]).toString()).toContain(
      `10.200.${n}.2/24`,
    );

    const remote = await turn(agentId, '::sh echo remote > where.txt; cat where.txt');
    const shell = remote.events.find((e) => e.type === 'tool_call.end');
    expect(shell?.data).toMatchObject({ output: 'remote\n', exit_code: 0 });
    expect(remote.events.at(-1)?.type).toBe('idle');
    // The workspace is on the runner's side, not the server's.
    expect(readFileSync(join(runnerDir, 'workspaces', remote.threadId, 'where.txt'), 'utf8')).toBe(
      'remote\n',
    );
    expect(existsSync(join(deployment.dataDir, 'workspaces', remote.threadId, 'where.txt'))).toBe(false);
    // ...so the server cannot read or upload its files, and says so.
    const refusal = { detail: { code: 'files_on_remote_runner', message: expect.any(String) } };
    expect(await json(await deployment.request('GET', `/v2/tasks/${remote.threadId}/files`), 409)).toEqual(
      refusal,
    );
    const upload = await deployment.request('POST', `/v2/tasks/${remote.threadId}/files/uploads`, {
      body: { path: 'x.txt', size_bytes: 1 },
    });
    expect(await json(upload, 409)).toEqual(refusal);

    // A sandbox_a thread meanwhile runs on the deployment's own runner.
    const local = await turn(await newAgent('sandbox_a'), '::sh echo local > where.txt');
    expect(local.events.at(-1)?.type).toBe('idle');
    expect(readFileSync(join(deployment.dataDir, 'workspaces', local.threadId, 'where.txt'), 'utf8')).toBe(
      'local\n',
    );
    expect(existsSync(join(runnerDir, 'workspaces', local.threadId))).toBe(false);

    // Neither that agent's runner nor the deployment's serves another sandbox_e agent.
    const refused = await turn(other, '::sh echo never');
    expect(refused.events.find((e) => e.type === 'error')?.data).toMatchObject({
      code: 'runner_unavailable',
    });
    expect(refused.events.some((e) => e.type === 'tool_call.end')).toBe(false);
    expect(existsSync(join(runnerDir, 'workspaces', refused.threadId))).toBe(false);
    await runner.stop();
  }, 90_000);

  it("writes the thread's skill versions into the runner's own folder, read-only at $PADDOCK_SKILLS_DIR", async () => {
    const skillMd = '---\nname: greeter\ndescription: Greets people.\n---\n\n# Greeter\n';
    const files = [
      { path: 'SKILL.md', content: skillMd },
      { path: 'templates/hello.txt', content: 'hello on a self-hosted runner\n' },
    ];
    await json(
      await deployment.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }),
      201,
    );
    const { agent_id: agentId } = await json<{ agent_id: string }>(
      await deployment.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({
            machine_kind: 'sandbox_e',
            harness: 'coding_alpha',
            title: randomUUID(),
            skills: [{ source: 'registry:default/greeter@1.0.0' }],
          }),
        },
      }),
      201,
    );
    const runner = startSelfHosted(await agentToken(agentId));
    await deployment.runnerConnected(connections() + 1);
    const input = [
      '::sh echo "dir=$PADDOCK_SKILLS_DIR"; cat $PADDOCK_SKILLS_DIR/greeter/templates/hello.txt',
      '::sh touch /skills/greeter/x 2>&1 || echo create-refused',
    ].join('\n');
    const first = await turn(agentId, input);
    const outputs = first.events.filter((e) => e.type === 'tool_call.end').map((e) => String(e.data.output));
    expect(outputs).toContain('dir=/skills\nhello on a self-hosted runner\n');
    expect(outputs.find((o) => o.includes('create-refused'))).toMatch(/Read-only file system/);
    // The runner wrote the version under its own data dir, read-only; the server wrote none.
    const folder = join(runnerDir, 'skills', 'default', 'greeter', '1.0.0');
    expect(readFileSync(join(folder, 'SKILL.md'), 'utf8')).toBe(skillMd);
    expect(statSync(join(folder, 'templates', 'hello.txt')).mode & 0o777).toBe(0o444);
    expect(existsSync(join(deployment.dataDir, 'skills', 'default', 'greeter'))).toBe(false);
    // Another thread's boot finds the folder there (written once).
    const inode = statSync(folder).ino;
    const second = await turn(agentId, '::sh cat $PADDOCK_SKILLS_DIR/greeter/SKILL.md');
    expect(second.events.find((e) => e.type === 'tool_call.end')?.data).toMatchObject({ output: skillMd });
    expect(statSync(folder).ino).toBe(inode);
    await runner.stop();
  }, 90_000);

  it('a restarted server adopts the turn a self-hosted runner kept running', async () => {
    const agentId = await newAgent('sandbox_e');
    const runner = startSelfHosted(await agentToken(agentId));
    await deployment.runnerConnected(connections() + 1);
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await deployment.request('POST', '/v2/threads', {
        body: { agent_id: agentId, input: '::sh sleep 3; echo survived' },
      }),
      201,
    );
    await waitFor(async () =>
      (await allEvents(deployment, threadId)).some((e) => e.type === 'tool_call.start'),
    );
    const before = connections();
    await deployment.killServer('SIGKILL');
    await deployment.startServer();
    // Both runners come back: the deployment's and the self-hosted one, which still runs the turn.
    await deployment.runnerConnected(before + 2);
    await settled(deployment, threadId, 30_000);
    const events = await allEvents(deployment, threadId);
    expect(events.find((e) => e.type === 'tool_call.end')?.data).toMatchObject({ output: 'survived\n' });
    expect(events.some((e) => e.type === 'error')).toBe(false);
    expect(events.at(-1)?.type).toBe('idle');
    await runner.stop();
  }, 90_000);
});
