import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { DraftEvent } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { Runner, type RunnerLog } from '../src/runner.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { turnCommand } from './turn-command.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('supervisor-frames');

/**
 * A shell line, run by the agent in its sandbox, that tries to write to the supervisor's stdout (the
 * runner's end of its link): it takes a copy of that descriptor with pidfd_getfd, as it could when the
 * supervisor ran as its uid. Now the supervisor keeps root's real uid and is not dumpable, so the
 * kernel refuses the copy.
 */
function toSupervisorPipe(producer: string): string {
  const copyToFd1 = [
    'my $pfd = syscall(434, $ARGV[0] + 0, 0); die "pidfd_open: $!\\n" if $pfd < 0;',
    'my $fd = syscall(438, $pfd, 1, 0); die "pidfd_getfd: $!\\n" if $fd < 0;',
    'open(my $out, ">&=", $fd) or die "open: $!";',
    'while (my $n = sysread(STDIN, my $buf, 65536)) { syswrite($out, $buf, $n) }',
    'print "wrote to the link\\n";',
  ].join(' ');
  const pid = "$(pgrep -o -f 'supervisor/paddock-supervisor')";
  return `::sh ${producer} | perl -e '${copyToFd1}' ${pid} 2>&1`;
}

describe.skipIf(!existsSync('/usr/bin/bwrap') || process.getuid?.() !== 0)(
  "a sandbox's agent and its supervisor's link",
  () => {
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

    it("cannot take the supervisor's link: the turn goes on, the sandbox keeps running, nothing is logged", async () => {
      const threadId = randomUUID();
      expect(await ensure(threadId)).toBe(true);
      const frame = Buffer.from('{"ev":"exit","proc":1,"code":0,"signal":null}\n').toString('base64');
      const events: DraftEvent[] = [];
      const result = await runner.runTurn(
        threadId,
        turnCommand(toSupervisorPipe(`echo ${frame} | base64 -d`)),
        (event) => events.push(event),
      );
      expect(result.stopReason).toBe('end_turn');
      const output = JSON.stringify(events.find((event) => event.type === 'tool_call.end')?.data);
      expect(output).toContain('pidfd_getfd: Operation not permitted');
      expect(output).not.toContain('wrote to the link');
      expect(runner.isRunning(threadId)).toBe(true);
      expect(logged.filter((line) => line.startsWith('error:'))).toEqual([]);
      const next = await runner.runTurn(threadId, turnCommand('::sh echo still here'), () => {});
      expect(next.stopReason).toBe('end_turn');
      await runner.stop(threadId);
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
  },
);
