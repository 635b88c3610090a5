import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { installKey, ProgramCache } from '@paddock/harness';
import { type DraftEvent, harnessProfileSchema, type SandboxLifecycle } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import type { SandboxProcess, SandboxProvider, SandboxSize } from '../src/provider.ts';
import { Runner } from '../src/runner.ts';
import type { EntrypointStream, SandboxStatus } from '../src/thread-sandbox.ts';
import { pidsWithMarker } from './host-processes.ts';
import { readLinesOf } from './proc-files.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { turnCommand } from './turn-command.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('runner');

/** An ACP profile of a tiny real package, so the runner's install runs the real npm quickly. */
function tinyProfile(version: string) {
  return harnessProfileSchema.parse({
    program: 'is-number',
    version,
    packages: { 'is-number': version },
    command: ['is-number'],
    dialect: 'openai-chat',
    token_env: 'PADDOCK_GATEWAY_TOKEN',
  });
}

describe.skipIf(!existsSync('/usr/bin/bwrap'))('runner on bwrap', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let server: TestServer;
  let provider: SandboxProvider;
  let runner: Runner;
  let cgroups = false;
  /** Boots of a thread's own sandbox; standbys are counted apart. */
  let freshBoots = 0;
  let standbyBoots = 0;

  async function ensure(
    threadId: string,
    extra: {
      entrypoint?: string;
      size?: SandboxSize;
      workspaceDir?: string;
      lifecycle?: SandboxLifecycle;
    } = {},
  ) {
    const output: { stream: EntrypointStream; text: string; exitCode?: number }[] = [];
    const statuses: SandboxStatus[] = [];
    const workspaceDir = extra.workspaceDir ?? (await root.dir(`ws-${threadId}`));
    const booted = await runner.ensure(threadId, {
      workspaceDir,
      env: {
        PADDOCK_API_URL: `http://127.0.0.1:${server.port}`,
        PADDOCK_TOKEN: 'pdk_thr_test',
        AGENT_SECRET: 'sekrit',
      },
      size: extra.size ?? 'S',
      entrypoint: extra.entrypoint,
      lifecycle: extra.lifecycle,
      onEntrypointOutput: (stream, text, exitCode) => output.push({ stream, text, exitCode }),
      onStatus: (status) => statuses.push(status),
    });
    const tookStandby = statuses.at(-1)?.detail === 'took over a standby sandbox';
    return { output, statuses, workspaceDir, tookStandby, booted };
  }

  /** While set, a freeze takes this long before the freezer is written, and `freezeBegun` is told. */
  let slowFreeze: { ms: number; freezeBegun: () => void } | undefined;
  /** The real sandbox, but for a freeze slowed as `slowFreeze` says. */
  function slowFreezes(sandbox: SandboxProcess): SandboxProcess {
    return new Proxy(sandbox, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property === 'setFrozen' && target.setFrozen)
          return async (frozen: boolean) => {
            if (frozen && slowFreeze) {
              slowFreeze.freezeBegun();
              await sleep(slowFreeze.ms);
            }
            return target.setFrozen!(frozen);
          };
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }

  function standbyDirs(stateDir: string): string[] {
    const dir = join(stateDir, 'standby');
    return existsSync(dir) ? readdirSync(dir) : [];
  }

  beforeAll(async () => {
    root = await makeTempRoot('runner');
    server = await startTestServer();
    // Its own cache, so the install (and its events) happen in this run whatever ran before.
    const harnessDir = join(root.path, 'harnesses');
    const bwrap = await createBwrapProvider({
      stateDir: await root.dir('provider'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
      harnessDir,
    });
    cgroups = bwrap.cgroups;
    // Counts boots; everything else is the real provider.
    provider = {
      kind: bwrap.kind,
      isolation: bwrap.isolation,
      egress: bwrap.egress,
      sharedFolders: bwrap.sharedFolders,
      skills: bwrap.skills,
      nodeDir: bwrap.nodeDir,
      apiUrlInside: bwrap.apiUrlInside,
      sandboxEnv: bwrap.sandboxEnv,
      close: () => bwrap.close(),
      create: async (spec) => {
        if (spec.id.startsWith('standby-')) standbyBoots++;
        else freshBoots++;
        return slowFreezes(await bwrap.create(spec));
      },
    };
    runner = new Runner({
      provider,
      stateDir: join(root.path, 'runner'),
      apiTarget: { host: '127.0.0.1', port: server.port },
      standby: { size: 'S', count: 1 },
      programs: new ProgramCache(harnessDir),
      // Long, so a stop that waits it out (a frozen supervisor) is told from one that does not
      // however busy the machine is; supervisors that hear their shutdown end well within it.
      stopGraceMs: 10_000,
    });
  });

  afterAll(async () => {
    await runner?.shutdown();
    await server?.close();
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  it('gives a new thread a warm standby: entrypoint files land in its workspace, secrets reach the tools, not the supervisor', async () => {
    await runner.standbysWarm();
    const [standbyId] = standbyDirs(join(root.path, 'runner'));
    const threadId = randomUUID();
    const fresh = freshBoots;
    // Neither the workspace nor its parent exists yet.
    const workspaceDir = join(root.path, 'workspaces', threadId);
    const entrypoint = [
      'echo "$AGENT_SECRET" > from-entrypoint.txt',
      // The script's parent is the supervisor, whose environment its processes cannot read.
      'tr "\\0" " " < /proc/$PPID/cmdline; echo',
      'cat /proc/$PPID/environ > /dev/null 2>&1 && echo environ read || echo environ refused',
    ].join('; ');
    const { output, statuses, tookStandby } = await ensure(threadId, { entrypoint, workspaceDir });
    expect(tookStandby).toBe(true);
    expect(freshBoots).toBe(fresh);
    expect(statuses.map((status) => status.status)).toEqual(['starting', 'running']);
    expect(await readFile(join(workspaceDir, 'from-entrypoint.txt'), 'utf8')).toBe('sekrit\n');
    expect(standbyDirs(join(root.path, 'runner'))).not.toContain(standbyId);

    const supervisor = output.map((each) => each.text).join('');
    expect(supervisor).toContain('supervisor/paddock-supervisor --api-socket /run/paddock/api.sock');
    expect(supervisor).toContain('environ refused');
    expect(supervisor).not.toContain('sekrit');
    expect(supervisor).not.toContain('pdk_thr_test');

    const events: DraftEvent[] = [];
    const result = await runner.runTurn(
      threadId,
      turnCommand('::sh echo "$AGENT_SECRET $PADDOCK_TOKEN" > /workspace/x && cat x'),
      (event) => events.push(event),
    );
    expect(result.error).toBeUndefined();
    expect(result.stopReason).toBe('end_turn');
    const ended = events.find((event) => event.type === 'tool_call.end');
    expect(ended?.data).toMatchObject({ status: 'ok', exit_code: 0 });
    expect(JSON.stringify(ended?.data)).toContain('sekrit pdk_thr_test');
    expect(await readFile(join(workspaceDir, 'x'), 'utf8')).toBe('sekrit pdk_thr_test\n');
    await runner.stop(threadId);
  });

  it('refills the pool after a claim, so the next new thread gets a standby too', async () => {
    await runner.standbysWarm();
    const before = standbyDirs(join(root.path, 'runner'));
    expect(before).toHaveLength(1);
    const boots = standbyBoots;
    const first = await ensure(randomUUID());
    expect(first.tookStandby).toBe(true);
    await runner.standbysWarm();
    expect(standbyBoots - boots).toBe(1);
    const after = standbyDirs(join(root.path, 'runner'));
    expect(after).toHaveLength(1);
    expect(after).not.toEqual(before);
    const second = await ensure(randomUUID());
    expect(second.tookStandby).toBe(true);
  });

  it('boots fresh for a workspace that already holds files, or a size the pool does not keep', async () => {
    await runner.standbysWarm();
    const fresh = freshBoots;
    const used = await root.dir(`ws-${randomUUID()}`);
    await writeFile(join(used, 'kept.txt'), 'from an earlier sandbox\n');
    const restarted = await ensure(randomUUID(), { workspaceDir: used, entrypoint: 'cat kept.txt' });
    expect(restarted.tookStandby).toBe(false);
    expect(restarted.statuses.at(-1)?.detail).toBe('booted a fresh sandbox');
    expect(restarted.output[0]?.text).toBe('from an earlier sandbox\n');

    const medium = await ensure(randomUUID(), { size: 'M' });
    expect(medium.tookStandby).toBe(false);
    expect(freshBoots - fresh).toBe(2);
    // The pool's standby is still there, untouched.
    expect(standbyDirs(join(root.path, 'runner'))).toHaveLength(1);
  });

  it('runs the entrypoint once, on the first boot only', async () => {
    const threadId = randomUUID();
    const entrypoint = 'echo "boot $AGENT_SECRET" >> /workspace/boots.log; echo ran';
    const first = await ensure(threadId, { entrypoint });
    expect(first.output).toEqual([
      { stream: 'stdout', text: 'ran\n', exitCode: undefined },
      { stream: 'status', text: 'entrypoint exited with code 0\n', exitCode: 0 },
    ]);
    await runner.stop(threadId);
    expect(runner.isRunning(threadId)).toBe(false);

    // The workspace holds boots.log now: this boot is a fresh one.
    const second = await ensure(threadId, { entrypoint });
    expect(second.tookStandby).toBe(false);
    expect(runner.isRunning(threadId)).toBe(true);
    expect(second.output).toEqual([]);
    expect(await readFile(join(first.workspaceDir, 'boots.log'), 'utf8')).toBe('boot sekrit\n');
    await runner.stop(threadId);
  });

  it("installs a turn's ACP program before the sandbox runs it, once", async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const profile = tinyProfile('7.0.0');
    const events: DraftEvent[] = [];
    const command = {
      ...turnCommand(
        `::sh cat "$PADDOCK_HARNESS_DIR/${installKey(profile)}/node_modules/is-number/package.json"`,
      ),
      harness_profile: profile,
    };
    const result = await runner.runTurn(threadId, command, (event) => events.push(event));
    expect(result.stopReason).toBe('end_turn');
    const installs = events.filter((event) => event.type === 'harness.install').map((event) => event.data);
    const about = { harness: 'coding_alpha', program: 'is-number', version: '7.0.0' };
    expect(installs[0]).toEqual({ ...about, status: 'installing', detail: 'installing is-number@7.0.0' });
    expect(installs.at(-1)).toEqual({
      ...about,
      status: 'installed',
      detail: expect.stringMatching(/^installed in \d+\.\d s \(\d+\.\d MB\)$/),
    });
    // The sandbox (booted before the install) reads the program where PADDOCK_HARNESS_DIR says.
    const ended = events.find((event) => event.type === 'tool_call.end');
    expect(JSON.stringify(ended?.data)).toContain('\\"version\\": \\"7.0.0\\"');

    const again: DraftEvent[] = [];
    const second = await runner.runTurn(
      threadId,
      { ...turnCommand('::sh true'), harness_profile: profile },
      (event) => again.push(event),
    );
    expect(second.stopReason).toBe('end_turn');
    expect(again.filter((event) => event.type === 'harness.install')).toEqual([]);
    await runner.stop(threadId);
  });

  it('fails a turn whose program cannot be installed with harness_unavailable, without running it', async () => {
    const threadId = randomUUID();
    const { workspaceDir } = await ensure(threadId);
    const events: DraftEvent[] = [];
    const command = { ...turnCommand('::sh touch /workspace/ran'), harness_profile: tinyProfile('999.0.0') };
    const result = await runner.runTurn(threadId, command, (event) => events.push(event));
    expect(result.stopReason).toBe('error');
    expect(result.error).toEqual({
      code: 'harness_unavailable',
      message: expect.stringMatching(
        /^cannot install is-number 999\.0\.0: npm install is-number@999\.0\.0 failed: ETARGET /,
      ),
      retryable: false,
    });
    // Progress lines come at most once a second, as many as the install takes; then the failure.
    const statuses = events.map((event) => event.type === 'harness.install' && event.data.status);
    expect(statuses.at(-1)).toBe('failed');
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set(['installing']));
    expect(existsSync(join(workspaceDir, 'ran'))).toBe(false);
    await runner.stop(threadId);
  });

  it('shares one boot between concurrent ensure calls', async () => {
    const threadId = randomUUID();
    const before = freshBoots;
    const calls = await Promise.all([
      ensure(threadId, { size: 'M' }),
      ensure(threadId, { size: 'M' }),
      ensure(threadId, { size: 'M' }),
    ]);
    expect(freshBoots - before).toBe(1);
    // Only the call that booted it had its environment (its token) taken.
    expect(calls.filter((call) => call.booted)).toHaveLength(1);
    expect((await ensure(threadId, { size: 'M' })).booted).toBe(false);
    expect(freshBoots - before).toBe(1);
    await runner.stop(threadId);
  });

  it('reports a failing entrypoint and the sandbox still runs turns', async () => {
    const threadId = randomUUID();
    const { output } = await ensure(threadId, { entrypoint: 'echo broken >&2; exit 3' });
    expect(output).toEqual([
      { stream: 'stderr', text: 'broken\n', exitCode: undefined },
      { stream: 'status', text: 'entrypoint exited with code 3\n', exitCode: 3 },
    ]);
    const result = await runner.runTurn(threadId, turnCommand('::sh echo works'), () => {});
    expect(result.stopReason).toBe('end_turn');
    await runner.stop(threadId);
  });

  it('interrupts a running turn', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const command = turnCommand('::sh sleep 60');
    const started = Date.now();
    const { promise: running, resolve } = Promise.withResolvers<void>();
    const result = runner.runTurn(threadId, command, (event) => {
      if (event.type === 'tool_call.start') resolve();
    });
    await running;
    runner.interrupt(threadId, command.turn_id);
    expect((await result).stopReason).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
    // The sandbox is still there for the next turn.
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    await runner.stop(threadId);
  });

  it('steers a message into a running turn, and refuses one for a turn that is over', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    // Steered while the turn's first step runs its tool: the message joins at the next step.
    const command = turnCommand('::sh sleep 0.4');
    let toolStarted!: () => void;
    const running = new Promise<void>((resolve) => {
      toolStarted = resolve;
    });
    const result = runner.runTurn(threadId, command, (event) => {
      if (event.type === 'tool_call.start') toolStarted();
    });
    await running;
    const steered = await runner.steer(threadId, command.turn_id, [{ id: 'm-1', content: 'second' }]);
    expect(steered).toBe(true);
    const turn = await result;
    expect(turn.lastAssistantText).toBe('You said: second');
    expect(turn.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'user', 'assistant']);
    expect(await runner.steer(threadId, command.turn_id, [{ id: 'm-2', content: 'late' }])).toBe(false);
    await runner.stop(threadId);
  });

  it('cancels a turn whose interrupt arrives before the supervisor started it', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const command = turnCommand('::sleep 60000');
    const started = Date.now();
    const result = runner.runTurn(threadId, command, () => {});
    // Written right behind the turn: the supervisor reads it while the turn still waits to start.
    runner.interrupt(threadId, command.turn_id);
    expect((await result).stopReason).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    await runner.stop(threadId);
  });

  /** Lines a background loop in the sandbox appends to `tick` every 50 ms. */
  async function ticks(workspaceDir: string): Promise<number> {
    return (await readFile(join(workspaceDir, 'tick'), 'utf8').catch(() => '')).split('\n').length;
  }
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('freezes an idle sandbox, wakes it for the next turn, then stops it keeping the workspace', async (context) => {
    if (!cgroups) context.skip();
    const threadId = randomUUID();
    const lifecycle = { idle: { freezeAfterMs: 1_000, stopAfterMs: 3_000 } };
    const { workspaceDir, statuses } = await ensure(threadId, {
      entrypoint: 'echo once >> boots',
      lifecycle,
    });
    const started = await runner.runTurn(
      threadId,
      turnCommand("::sh nohup sh -c 'while true; do echo x >> tick; sleep 0.05; done' > /dev/null 2>&1 &"),
      () => {},
    );
    expect(started.stopReason).toBe('end_turn');
    await sleep(300);
    expect(runner.state(threadId)).toBe('running');
    await sleep(1_000);
    expect(runner.state(threadId)).toBe('sleeping');
    expect(statuses.map((s) => s.status)).toContain('sleeping');
    // Frozen: the loop does not advance.
    const frozenAt = await ticks(workspaceDir);
    await sleep(300);
    expect(await ticks(workspaceDir)).toBe(frozenAt);

    const woke = await runner.runTurn(threadId, turnCommand('::sh wc -l < tick'), () => {});
    expect(woke.stopReason).toBe('end_turn');
    expect(runner.state(threadId)).toBe('running');
    await sleep(300);
    expect(await ticks(workspaceDir)).toBeGreaterThan(frozenAt);

    // Idle long enough, it stops: processes gone, workspace kept, and the next boot skips the entrypoint.
    for (let i = 0; i < 100 && statuses.at(-1)?.status !== 'stopped'; i++) await sleep(50);
    expect(runner.state(threadId)).toBe('absent');
    expect(statuses.at(-1)).toMatchObject({
      status: 'stopped',
      detail: 'stopped while idle; the workspace is kept',
    });
    const stoppedAt = await ticks(workspaceDir);
    await sleep(200);
    expect(await ticks(workspaceDir)).toBe(stoppedAt);
    await ensure(threadId, { entrypoint: 'echo once >> boots', workspaceDir, lifecycle });
    expect(await readFile(join(workspaceDir, 'boots'), 'utf8')).toBe('once\n');
    await runner.stop(threadId);
  });

  it('stops a sleeping sandbox by thawing it first, so its supervisor shuts down without the grace', async (context) => {
    if (!cgroups) context.skip();
    const threadId = randomUUID();
    // Asleep well before its stop, however slow the freezer on a busy machine.
    const { statuses } = await ensure(threadId, {
      lifecycle: { idle: { freezeAfterMs: 300, stopAfterMs: 3_000 } },
    });
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    const idleAt = Date.now();
    // Waited for past the grace: a stop slowed by a busy machine is told from one that waited it out.
    for (let i = 0; i < 300 && statuses.at(-1)?.status !== 'stopped'; i++) await sleep(50);
    expect(statuses.map((s) => s.status).slice(-2)).toEqual(['sleeping', 'stopped']);
    // A frozen supervisor could not read its shutdown: the stop would have waited out the 10 s grace.
    expect(Date.now() - idleAt).toBeLessThan(3_000 + 6_000);
  });

  it('wakes a sandbox a turn finds falling asleep, rather than freezing it under the turn', async (context) => {
    if (!cgroups) context.skip();
    const threadId = randomUUID();
    await ensure(threadId, { lifecycle: { idle: { freezeAfterMs: 200, stopAfterMs: 60_000 } } });
    const begun = new Promise<void>((freezeBegun) => {
      slowFreeze = { ms: 1_000, freezeBegun };
    });
    try {
      await begun;
      // The freezer works for a second: the turn that arrives meanwhile must run, awake, to its end.
      const turn = await runner.runTurn(threadId, turnCommand('::sh sleep 2; echo awake'), () => {});
      expect(turn.stopReason).toBe('end_turn');
      expect(turn.lastAssistantText).toContain('awake');
      expect(runner.state(threadId)).toBe('running');
    } finally {
      slowFreeze = undefined;
      await runner.stop(threadId);
    }
  });

  it('stops a sandbox at the end of its lifetime, ending its turn, and never boots it again', async () => {
    const threadId = randomUUID();
    await ensure(threadId, { lifecycle: { expiresAt: Date.now() + 1_500 } });
    const cut = await runner.runTurn(threadId, turnCommand('::sh sleep 30'), () => {});
    expect(cut.stopReason).toBe('error');
    expect(cut.error).toMatchObject({ code: 'sandbox_expired' });
    expect(runner.state(threadId)).toBe('absent');
    await expect(ensure(threadId)).rejects.toThrow('reached the end of its lifetime');
  });

  it('ends a turn whose sandbox dies with sandbox_exited, and boots a fresh sandbox next time', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    // The agent cannot kill its supervisor; the host can (an OOM kill, an operator).
    const marker = `paddock-dies-${process.pid}-${Date.now()}`;
    const turn = runner.runTurn(threadId, turnCommand(`::sh exec -a ${marker} sleep 1000`), () => {});
    for (let i = 0; i < 50 && pidsWithMarker(marker).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const [command] = pidsWithMarker(marker);
    const stat = await readFile(`/proc/${command}/stat`, 'utf8');
    const supervisor = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    process.kill(supervisor, 'SIGKILL');
    const result = await turn;
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatchObject({ code: 'sandbox_exited', retryable: true });
    expect(runner.isRunning(threadId)).toBe(false);
    const before = freshBoots;
    await ensure(threadId);
    expect(freshBoots - before).toBe(1);
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    await runner.stop(threadId);
  });

  it('runs code beside a turn, and fails a code run its sandbox dies under', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const turn = runner.runTurn(threadId, turnCommand('::sh sleep 2'), () => {});
    const run = { op: 'run', language: 'bash', timeout_ms: 10_000, output_limit_bytes: 1024 } as const;
    expect(await runner.exec(threadId, { ...run, code: 'echo "$AGENT_SECRET"' })).toMatchObject({
      exit_code: 0,
      stdout: 'sekrit\n',
    });
    expect(runner.activeTurn(threadId)).toBeDefined();
    const dying = expect(runner.exec(threadId, { ...run, code: 'sleep 30' })).rejects.toThrow(
      /exited during a code run/,
    );
    await runner.stop(threadId);
    await dying;
    expect((await turn).stopReason).toBe('cancelled');
    await expect(runner.exec(threadId, { ...run, code: 'true' })).rejects.toThrow(/no running sandbox/);
  });

  it('stops mid-turn as a cancelled turn, leaving nothing running', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const marker = `paddock-runner-${process.pid}-${Date.now()}`;
    const result = runner.runTurn(threadId, turnCommand(`::sh exec -a ${marker} sleep 1000`), () => {});
    for (let i = 0; i < 50 && pidsWithMarker(marker).length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(pidsWithMarker(marker).length).toBe(1);
    await runner.stop(threadId);
    expect((await result).stopReason).toBe('cancelled');
    expect(pidsWithMarker(marker)).toEqual([]);
  });

  it('replaces a standby that dies, and leaves no standby process or directory behind at shutdown', async (context) => {
    // The standbys' processes are found through their cgroups.
    if (!cgroups) context.skip();
    const groupsDir = join(cgroupMount, 'pids', cgroupParent);
    const standbyGroups = () => readdirSync(groupsDir).filter((name) => name.startsWith('standby-'));
    // The other runner's standby shares the cgroup parent.
    const others = new Set(standbyGroups());
    const ours = () => standbyGroups().filter((name) => !others.has(name));
    const pidsOf = (group: string) => readLinesOf(join(groupsDir, group, 'cgroup.procs'));
    const stateDir = join(root.path, 'runner-shutdown');
    const pool = new Runner({
      // The shared provider outlives this runner.
      provider: { ...provider, close: async () => {} },
      stateDir,
      apiTarget: { host: '127.0.0.1', port: server.port },
      standby: { size: 'S', count: 2 },
    });
    let live: string[] = [];
    try {
      await pool.standbysWarm();
      const dirs = standbyDirs(stateDir);
      expect(dirs).toHaveLength(2);
      expect(ours().sort()).toEqual([...dirs].sort());

      // Killed from outside: the pool drops it and boots another.
      const [victim] = dirs;
      const victimPids = pidsOf(victim!);
      expect(victimPids.length).toBeGreaterThan(0);
      for (const pid of victimPids) killIfAlive(Number(pid));
      for (let i = 0; i < 100 && standbyDirs(stateDir).includes(victim!); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await pool.standbysWarm();
      expect(standbyDirs(stateDir)).toHaveLength(2);
      expect(standbyDirs(stateDir)).not.toContain(victim);
      live = ours().flatMap(pidsOf);
      expect(live.length).toBeGreaterThan(0);
    } finally {
      await pool.shutdown();
    }
    expect(existsSync(join(stateDir, 'standby'))).toBe(false);
    expect(ours()).toEqual([]);
    expect(live.filter(isRunning)).toEqual([]);
  });

  /** Still there and not a zombie (which only waits for its parent to reap it). */
  function isRunning(pid: string): boolean {
    const stat = readLinesOf(`/proc/${pid}/stat`)[0];
    return stat !== undefined && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  }
});

/** SIGKILLs a process listed a moment ago, which may have exited since (ESRCH). */
function killIfAlive(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}
