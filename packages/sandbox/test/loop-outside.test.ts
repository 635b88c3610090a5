import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { DraftEvent, TurnCommand } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { Runner } from '../src/runner.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';
import { turnCommand } from './turn-command.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('loop-outside');

describe.skipIf(!existsSync('/usr/bin/bwrap') || process.getuid?.() !== 0)(
  'the loop in the runner, the tools in the sandbox',
  () => {
    let root: Awaited<ReturnType<typeof makeTempRoot>>;
    let server: TestServer;
    let runner: Runner;

    beforeAll(async () => {
      root = await makeTempRoot('loop-outside');
      server = await startTestServer();
      runner = new Runner({
        provider: await createBwrapProvider({
          stateDir: await root.dir('provider'),
          cgroups: { mount: cgroupMount, parent: cgroupParent },
        }),
        stateDir: join(root.path, 'runner'),
        apiTarget: { host: '127.0.0.1', port: server.port },
        standby: { size: 'S', count: 0 },
      });
    });

    afterAll(async () => {
      await runner?.shutdown();
      await server?.close();
      await root?.remove();
      await removeCgroupParent(cgroupMount, cgroupParent);
    });

    it("runs a follow-up's tool call in the sandbox as its workspace's uid, and nothing of the loop there", async () => {
      const threadId = randomUUID();
      const workspaceDir = join(root.path, 'workspaces', threadId);
      await runner.ensure(threadId, {
        workspaceDir,
        env: { PADDOCK_API_URL: `http://127.0.0.1:${server.port}`, PADDOCK_TOKEN: 'pdk_thr_test' },
        size: 'S',
      });
      const first = turnCommand('::sh echo first > first.txt');
      const firstResult = await runner.runTurn(threadId, first, () => {});
      expect(firstResult.stopReason).toBe('end_turn');

      // The follow-up carries the conversation so far, as the turn executor sends it.
      const events: DraftEvent[] = [];
      const followUp = turnCommand('::sh id -u; cat first.txt; ps -eo ruser:12,args --no-headers', [
        ...first.messages,
        ...(firstResult.messages as TurnCommand['messages']),
      ]);
      const result = await runner.runTurn(threadId, followUp, (event) => events.push(event));
      expect(result.stopReason).toBe('end_turn');
      const end = events.find((event) => event.type === 'tool_call.end');
      const output = String((end?.data as { output?: string } | undefined)?.output);
      const [uid, written, ...processes] = output.trim().split('\n');
      // The workspace's own uid, which owns what the first turn's tool wrote.
      expect(Number(uid)).toBe((await stat(workspaceDir)).uid);
      expect((await stat(join(workspaceDir, 'first.txt'))).uid).toBe(Number(uid));
      expect(written).toBe('first');
      // In the sandbox: bubblewrap's init, the supervisor (root's, acting as the user), the tool's
      // own processes; no Node process at all, no harness, no model client.
      // (ruser: the real uid; bubblewrap's init names the supervisor's command among its own.)
      expect(processes.filter((line) => /\/node\b/.test(line))).toEqual([]);
      expect(processes.filter((line) => /^\S+ +\/opt\/paddock\/supervisor\//.test(line))).toEqual([
        expect.stringMatching(/^root +\/opt\/paddock\/supervisor\/paddock-supervisor /),
      ]);
      expect(output).not.toMatch(/harness|@ai-sdk|node_modules/);
    });
  },
);
