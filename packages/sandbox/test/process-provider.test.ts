import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DraftEvent } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProcessProvider } from '../src/process/process-provider.ts';
import type { SandboxProcess, SandboxProvider } from '../src/provider.ts';
import { Runner } from '../src/runner.ts';
import type { SandboxStatus } from '../src/thread-sandbox.ts';
import { pidsWithMarker } from './host-processes.ts';
import { configure, runScript } from './run-script.ts';
import { makeTempRoot } from './temp-root.ts';
import { startTestServer } from './test-server.ts';

describe('process provider', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let provider: SandboxProvider;
  let sandbox: SandboxProcess;
  let workspace: string;
  const booted: SandboxProcess[] = [];

  async function boot(workspaceDir: string): Promise<SandboxProcess> {
    const created = await provider.create({
      id: `p${booted.length}`,
      workspaceDir,
      size: 'S',
      apiSocket: '/nonexistent/api.sock',
    });
    booted.push(created);
    const env = {
      PADDOCK_API_URL: 'http://127.0.0.1:4321',
      PADDOCK_TOKEN: 'pdk_thr_test',
      MY_SECRET: 's3cret',
    };
    configure(created, provider.sandboxEnv(workspaceDir, env, 'S'));
    return created;
  }

  beforeAll(async () => {
    root = await makeTempRoot('process');
    provider = createProcessProvider();
    workspace = await root.dir('workspace');
    sandbox = await boot(workspace);
  });

  afterAll(async () => {
    await Promise.all(booted.map((each) => each.destroy()));
    await root?.remove();
  });

  it('boots to ready in the workspace directory', async () => {
    expect(sandbox.pid).toBeGreaterThan(0);
    expect((await runScript(sandbox, 'pwd')).stdout).toBe(`${workspace}\n`);
  });

  it('keeps files between commands', async () => {
    await runScript(sandbox, 'echo kept > kept.txt');
    expect((await runScript(sandbox, 'cat kept.txt')).stdout).toBe('kept\n');
    expect(await readFile(join(workspace, 'kept.txt'), 'utf8')).toBe('kept\n');
  });

  it('scrubs the environment down to the sandbox env, passing PADDOCK_API_URL straight through', async () => {
    const run = await runScript(
      sandbox,
      'env | cut -d= -f1 | sort | tr "\\n" " "; echo; echo "$MY_SECRET $PADDOCK_API_URL"',
    );
    const names = run.stdout.split('\n')[0]!.trim().split(' ');
    expect(names.filter((name) => !['PWD', 'SHLVL', '_'].includes(name))).toEqual([
      'HOME',
      'LANG',
      'MY_SECRET',
      'PADDOCK_API_URL',
      'PADDOCK_TOKEN',
      'PADDOCK_WORKSPACE',
      'PATH',
    ]);
    expect(run.stdout.split('\n')[1]).toBe('s3cret http://127.0.0.1:4321');
  });

  it("keeps the secrets out of the supervisor's own environment", async () => {
    const run = await runScript(
      sandbox,
      'tr "\\0" " " < /proc/$PPID/cmdline; echo; tr "\\0" "\\n" < /proc/$PPID/environ',
    );
    const [cmdline, ...environ] = run.stdout.trimEnd().split('\n');
    expect(cmdline).toContain('supervisor/paddock-supervisor');
    expect(environ).toEqual(['PATH=/usr/local/bin:/usr/bin:/bin']);
  });

  it('reports a failing script and keeps working', async () => {
    expect((await runScript(sandbox, 'exit 5')).exitCode).toBe(5);
    expect((await runScript(sandbox, 'echo ok')).stdout).toBe('ok\n');
  });

  it('kills the whole tree on destroy', async () => {
    const doomed = await boot(await root.dir('doomed'));
    const marker = `paddock-process-leak-${process.pid}-${Date.now()}`;
    await runScript(doomed, `(exec -a ${marker} sleep 1000 &); exec -a ${marker} sleep 1001 & sleep 0.1`);
    expect(pidsWithMarker(marker).length).toBe(2);
    await doomed.destroy();
    // SIGKILL is sent by destroy; the kernel takes the processes down a moment later on a busy machine.
    await expect.poll(() => pidsWithMarker(marker), { timeout: 2000 }).toEqual([]);
  });

  it('runs a coding_alpha turn through a Runner on a claimed standby, reaching the gateway directly', async () => {
    const server = await startTestServer();
    const stateDir = await root.dir('runner');
    const runner = new Runner({
      provider,
      stateDir,
      apiTarget: { host: '127.0.0.1', port: server.port },
    });
    try {
      await runner.standbysWarm();
      const threadId = randomUUID();
      // Not there yet: the claim creates its parent and moves the standby's directory in.
      const workspaceDir = join(root.path, 'workspaces', threadId);
      const apiUrl = `http://127.0.0.1:${server.port}`;
      const statuses: SandboxStatus[] = [];
      await runner.ensure(threadId, {
        workspaceDir,
        env: { PADDOCK_API_URL: apiUrl, PADDOCK_TOKEN: 'pdk_thr_test', AGENT_SECRET: 'sekrit' },
        size: 'S',
        entrypoint: 'echo "$AGENT_SECRET $PADDOCK_WORKSPACE $(pwd)" > boot.txt',
        onStatus: (status) => statuses.push(status),
      });
      expect(statuses.at(-1)).toMatchObject({ status: 'running', detail: 'took over a standby sandbox' });
      expect(await readFile(join(workspaceDir, 'boot.txt'), 'utf8')).toBe(
        `sekrit ${workspaceDir} ${workspaceDir}\n`,
      );
      const events: DraftEvent[] = [];
      const result = await runner.runTurn(
        threadId,
        {
          turn_id: randomUUID(),
          harness: 'coding_alpha',
          model: 'scripted',
          messages: [{ role: 'user', content: '::sh echo hi > x && cat x' }],
        },
        (event) => events.push(event),
      );
      expect(result.stopReason).toBe('end_turn');
      expect(events.some((event) => event.type === 'tool_call.end')).toBe(true);
      expect(await readFile(join(workspaceDir, 'x'), 'utf8')).toBe('hi\n');
      await runner.standbysWarm();
      expect(processesIn(join(stateDir, 'standby')).length).toBe(1);
    } finally {
      await runner.shutdown();
      await server.close();
    }
    expect(existsSync(join(stateDir, 'standby'))).toBe(false);
    expect(processesIn(join(stateDir, 'standby'))).toEqual([]);
  });

  it("points PADDOCK_SKILLS_DIR at a copy of the thread's skills, which the harness lists and reads", async () => {
    const server = await startTestServer();
    const stateDir = await root.dir('skills-runner');
    const skillDir = await root.dir('registry/default/greeter/1.0.0');
    const skillMd = '---\nname: greeter\ndescription: Greets people.\n---\n\n# Greeter\n';
    await writeFile(join(skillDir, 'SKILL.md'), skillMd);
    const runner = new Runner({ provider, stateDir, apiTarget: { host: '127.0.0.1', port: server.port } });
    try {
      const threadId = randomUUID();
      const workspaceDir = await root.dir(`skills-workspace-${threadId}`);
      await runner.ensure(threadId, {
        workspaceDir,
        env: { PADDOCK_API_URL: `http://127.0.0.1:${server.port}`, PADDOCK_TOKEN: 'pdk_thr_test' },
        size: 'S',
        onStatus: () => {},
        skills: [{ slug: 'greeter', hostDir: skillDir }],
      });
      const events: DraftEvent[] = [];
      const copy = join(stateDir, threadId, 'skills');
      const input = [
        '::sh echo "$PADDOCK_SKILLS_DIR"',
        `::call read {"path":"${copy}/greeter/SKILL.md"}`,
        `::seen ${copy}/greeter/SKILL.md): Greets people.`,
      ].join('\n');
      const result = await runner.runTurn(
        threadId,
        {
          turn_id: randomUUID(),
          harness: 'coding_alpha',
          model: 'scripted',
          messages: [{ role: 'user', content: input }],
        },
        (event) => events.push(event),
      );
      expect(result.stopReason).toBe('end_turn');
      const ends = events.filter((e) => e.type === 'tool_call.end').map((e) => e.data as { output?: string });
      // The two calls run side by side: either may end first.
      expect(ends.map((e) => e.output)).toHaveLength(2);
      expect(ends.map((e) => e.output)).toEqual(
        expect.arrayContaining([`${copy}\n`, expect.stringContaining('# Greeter')]),
      );
      // The skill was in the model's instructions, at the copy's path.
      const answers = events.filter((e) => e.type === 'assistant.message').map((e) => String(e.data.content));
      expect(answers).toContain('seen: yes');
      expect(await readFile(join(copy, 'greeter', 'SKILL.md'), 'utf8')).toBe(skillMd);
    } finally {
      await runner.shutdown();
      await server.close();
    }
  });
});

/** Host pids whose working directory is under `dir` (or was, before it was removed). */
function processesIn(dir: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`).startsWith(`${dir}/`)) pids.push(Number(entry));
    } catch {}
  }
  return pids;
}

describe('process provider and the program cache', () => {
  it('names the cache where it is on the host, as its sandboxes share the host’s files', () => {
    const env = createProcessProvider({ harnessDir: '/var/cache/harnesses' }).sandboxEnv(
      '/ws',
      { PADDOCK_HARNESS_DIR: '/elsewhere' },
      'S',
    );
    expect(env.PADDOCK_HARNESS_DIR).toBe('/var/cache/harnesses');
    expect(createProcessProvider().sandboxEnv('/ws', {}, 'S').PADDOCK_HARNESS_DIR).toBeUndefined();
  });
});
