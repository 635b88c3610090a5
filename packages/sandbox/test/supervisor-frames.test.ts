import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DraftEvent, TurnCommand, TurnResult } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapProvider } from '../src/bwrap-provider.ts';
import { Runner, type RunnerLog } from '../src/runner.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('supervisor-frames');

function turnCommand(text: string): TurnCommand {
  return {
    turn_id: randomUUID(),
    harness: 'coding_alpha',
    model: 'scripted',
    messages: [{ role: 'user', content: text }],
  };
}

/**
 * A shell line, run by the agent in its sandbox, that writes what `producer` prints to the
 * supervisor's stdout, the runner's end of which is a socket: the agent takes a copy of that
 * descriptor with pidfd_getfd (the supervisor runs as its uid), as code that took the supervisor
 * over could write anything there. The descriptor is non-blocking (the supervisor's), hence the
 * retries.
 */
function toSupervisorPipe(producer: string): string {
  const copyToFd1 = [
    'my $pfd = syscall(434, $ARGV[0] + 0, 0); die "pidfd_open: $!" if $pfd < 0;',
    'my $fd = syscall(438, $pfd, 1, 0); die "pidfd_getfd: $!" if $fd < 0;',
    'open(my $out, ">&=", $fd) or die "open: $!";',
    'while (my $n = sysread(STDIN, my $buf, 65536)) { my $off = 0; while ($off < $n) {',
    'my $w = syswrite($out, $buf, $n - $off, $off);',
    'if (!defined $w) { die "write: $!" unless $!{EAGAIN}; select(undef, undef, undef, 0.005); next }',
    '$off += $w } }',
  ].join(' ');
  // The oldest process of the sandbox's uid running the supervisor's entry (bwrap's own pid 1 names it
  // too, as root).
  const pid = "$(pgrep -o -u $(id -u) -f 'supervisor/main[.]ts')";
  return `::sh ${producer} | perl -e '${copyToFd1}' ${pid}`;
}

function frame(text: string): string {
  return toSupervisorPipe(`echo ${Buffer.from(`${text}\n`).toString('base64')} | base64 -d`);
}

describe.skipIf(!existsSync('/usr/bin/bwrap'))('a sandbox writing its own frames to the runner', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let server: TestServer;
  let runner: Runner;
  const logged: string[] = [];
  const bystander = randomUUID();

  async function ensure(threadId: string): Promise<boolean> {
    return runner.ensure(threadId, {
      workspaceDir: await root.dir(`ws-${threadId}`),
      env: { PADDOCK_API_URL: `http://127.0.0.1:${server.port}`, PADDOCK_TOKEN: 'pdk_thr_test' },
      size: 'S',
    });
  }

  beforeAll(async () => {
    root = await makeTempRoot('supervisor-frames');
    server = await startTestServer();
    const provider = await createBwrapProvider({
      stateDir: await root.dir('provider'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
    });
    const log: RunnerLog = (level, message) => logged.push(`${level}: ${message}`);
    runner = new Runner({
      provider,
      stateDir: join(root.path, 'runner'),
      apiTarget: { host: '127.0.0.1', port: server.port },
      standby: { size: 'S', count: 1 },
      log,
    });
    // Another thread's sandbox, which none of the frames below may disturb.
    await ensure(bystander);
    const marked = await runner.runTurn(bystander, turnCommand('::sh echo alive > /tmp/marker'), () => {});
    expect(marked.stopReason).toBe('end_turn');
  });

  afterAll(async () => {
    await runner?.shutdown();
    await server?.close();
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  /** What the agent writes, and the reason the runner logs for it. */
  const malformed: [string, (turnId: string) => string, string][] = [
    ['not JSON', () => frame('{"type":"event",'), 'not JSON'],
    ['JSON null', () => frame('null'), 'expected object'],
    ['an array', () => frame('[1,2]'), 'expected object'],
    [
      'an unknown type',
      (turnId) => frame(JSON.stringify({ type: 'exfiltrate', turn_id: turnId })),
      'exfiltrate',
    ],
    [
      'a turn.result without a result',
      (turnId) => frame(JSON.stringify({ type: 'turn.result', turn_id: turnId })),
      'turn.result: result',
    ],
    [
      'a turn.result whose messages are not messages',
      (turnId) =>
        frame(
          JSON.stringify({
            type: 'turn.result',
            turn_id: turnId,
            result: { stopReason: 'end_turn', messages: [{ role: 'root' }], lastAssistantText: '' },
          }),
        ),
      'turn.result: result.messages',
    ],
    [
      'an event of no known type',
      (turnId) =>
        frame(JSON.stringify({ type: 'event', turn_id: turnId, event: { type: 'db.drop', data: {} } })),
      'event: event',
    ],
    [
      'an event without a turn',
      () => frame(JSON.stringify({ type: 'event', event: { type: 'message.delta' } })),
      'event: turn_id',
    ],
    [
      'a log of no known level',
      () => frame(JSON.stringify({ type: 'log', level: 'fatal', message: 'x' })),
      'log: level',
    ],
    [
      'a log whose message is not text',
      () => frame(JSON.stringify({ type: 'log', level: 'warn', message: {} })),
      'log: message',
    ],
    [
      'a steer.result with a numeric id',
      () => frame(JSON.stringify({ type: 'steer.result', steer_id: 1 })),
      'steer.result: steer_id',
    ],
    [
      'an exec.result with no id',
      () => frame(JSON.stringify({ type: 'exec.result', result: 'x' })),
      'exec.result: exec_id',
    ],
    [
      'entrypoint output on no stream',
      () => frame(JSON.stringify({ type: 'entrypoint.output', stream: 'stdin', text: 1 })),
      'entrypoint.output: stream',
    ],
    [
      'an entrypoint.exit with no code',
      () => frame(JSON.stringify({ type: 'entrypoint.exit', exit_code: 'zero' })),
      'entrypoint.exit: exit_code',
    ],
    ['a second ready', () => frame(JSON.stringify({ type: 'ready', pid: 1 })), 'ready: sent twice'],
    ['a ready with no pid', () => frame(JSON.stringify({ type: 'ready' })), 'ready: pid'],
    ['a type that is not text', () => frame(JSON.stringify({ type: ['warm'] })), 'frame: type'],
    // 65 MiB with no newline, past the bound.
    [
      'a line longer than the bound',
      () => toSupervisorPipe("head -c 68157440 /dev/zero | tr '\\0' a"),
      'a line longer than',
    ],
  ];

  async function expectBrokenOff(threadId: string, result: TurnResult, reason: string): Promise<void> {
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatchObject({ code: 'sandbox_protocol_error', retryable: false });
    expect(runner.isRunning(threadId)).toBe(false);
    const errors = logged.filter((line) => line.startsWith('error:') && line.includes(`thread ${threadId}`));
    expect(errors).toEqual([expect.stringContaining('destroyed for a protocol error: ')]);
    expect(errors[0]).toContain(reason);
    // The next turn gets a fresh sandbox, which works.
    expect(await ensure(threadId)).toBe(true);
    const next = await runner.runTurn(threadId, turnCommand('::sh echo fresh'), () => {});
    expect(next.stopReason).toBe('end_turn');
    await runner.stop(threadId);
  }

  it.each(malformed)(
    'fails the turn on %s, destroys the sandbox, and boots a fresh one next',
    async (_, write, reason) => {
      const threadId = randomUUID();
      expect(await ensure(threadId)).toBe(true);
      const command = turnCommand('');
      command.messages = [{ role: 'user', content: write(command.turn_id) }];
      const events: DraftEvent[] = [];
      const result = await runner.runTurn(threadId, command, (event) => events.push(event));
      expect(events.map((event) => event.type)).not.toContain('db.drop');
      await expectBrokenOff(threadId, result, reason);
    },
  );

  it('fails a code run answered with a result of the wrong shape, and its sandbox with it', async () => {
    const threadId = randomUUID();
    expect(await ensure(threadId)).toBe(true);
    const run = runner.exec(threadId, {
      op: 'run',
      language: 'bash',
      code: 'sleep 20',
      timeout_ms: 30_000,
      output_limit_bytes: 1024,
    });
    const failed = expect(run).rejects.toThrow('malformed result');
    // The runner numbers code runs in order: answer each of the first few hundred with a non-result.
    const bogus = `for i in $(seq 1 500); do echo "{\\"type\\":\\"exec.result\\",\\"exec_id\\":\\"exec-$i\\",\\"result\\":{\\"exit_code\\":\\"x\\"}}"; done`;
    const result = await runner.runTurn(threadId, turnCommand(toSupervisorPipe(bogus)), () => {});
    await failed;
    await expectBrokenOff(threadId, result, 'exec.result: not a result of run');
  });

  it('leaves the other threads’ sandboxes running untouched', async () => {
    expect(await ensure(bystander)).toBe(false);
    const events: DraftEvent[] = [];
    const result = await runner.runTurn(bystander, turnCommand('::sh cat /tmp/marker'), (event) =>
      events.push(event),
    );
    expect(result.stopReason).toBe('end_turn');
    expect(JSON.stringify(events.find((event) => event.type === 'tool_call.end')?.data)).toContain('alive');
  });
});
