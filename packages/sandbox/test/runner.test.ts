import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DraftEvent } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBwrapProvider } from '../src/bwrap-provider.ts';
import type { TurnCommand } from '../src/protocol.ts';
import type { SandboxProvider } from '../src/provider.ts';
import { Runner } from '../src/runner.ts';
import type { EntrypointStream, SandboxStatus } from '../src/thread-sandbox.ts';
import { pidsWithMarker } from './host-processes.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('runner');
const gateway = { baseURL: 'http://127.0.0.1:8787/v2/gateway/v1', apiKey: 'pdk_thr_test' };

function turnCommand(text: string): TurnCommand {
  return {
    type: 'turn',
    turn_id: randomUUID(),
    harness: 'coding_alpha',
    model: 'scripted',
    messages: [{ role: 'user', content: text }],
    gateway,
  };
}

describe.skipIf(!existsSync('/usr/bin/bwrap'))('runner on bwrap', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let server: TestServer;
  let runner: Runner;
  let creates = 0;

  async function ensure(threadId: string, extra: { entrypoint?: string } = {}) {
    const output: { stream: EntrypointStream; text: string; exitCode?: number }[] = [];
    const statuses: SandboxStatus[] = [];
    const workspaceDir = await root.dir(`ws-${threadId}`);
    await runner.ensure(threadId, {
      workspaceDir,
      env: {
        PADDOCK_API_URL: `http://127.0.0.1:${server.port}`,
        PADDOCK_TOKEN: 'pdk_thr_test',
        AGENT_SECRET: 'sekrit',
      },
      size: 'S',
      entrypoint: extra.entrypoint,
      onEntrypointOutput: (stream, text, exitCode) => output.push({ stream, text, exitCode }),
      onStatus: (status) => statuses.push(status),
    });
    return { output, statuses, workspaceDir };
  }

  beforeAll(async () => {
    root = await makeTempRoot('runner');
    server = await startTestServer();
    const bwrap = await createBwrapProvider({
      stateDir: await root.dir('provider'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
    });
    // Counts boots; everything else is the real provider.
    const counted: SandboxProvider = {
      kind: bwrap.kind,
      isolation: bwrap.isolation,
      apiUrlInside: bwrap.apiUrlInside,
      close: () => bwrap.close(),
      create: (spec) => {
        creates++;
        return bwrap.create(spec);
      },
    };
    runner = new Runner({
      provider: counted,
      stateDir: join(root.path, 'runner'),
      apiTarget: { host: '127.0.0.1', port: server.port },
    });
  });

  afterAll(async () => {
    await runner?.shutdown();
    await server?.close();
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  it('runs the entrypoint with the secrets once, on the first boot only', async () => {
    const threadId = randomUUID();
    const entrypoint = 'echo "boot $AGENT_SECRET" >> /workspace/boots.log; echo ran';
    const first = await ensure(threadId, { entrypoint });
    expect(first.output).toEqual([
      { stream: 'stdout', text: 'ran\n', exitCode: undefined },
      { stream: 'status', text: 'entrypoint exited with code 0\n', exitCode: 0 },
    ]);
    expect(first.statuses.map((status) => status.status)).toEqual(['starting', 'running']);
    await runner.stop(threadId);
    expect(runner.isRunning(threadId)).toBe(false);

    const second = await ensure(threadId, { entrypoint });
    expect(runner.isRunning(threadId)).toBe(true);
    expect(second.output).toEqual([]);
    expect(await readFile(join(first.workspaceDir, 'boots.log'), 'utf8')).toBe('boot sekrit\n');
    await runner.stop(threadId);
  });

  it('shares one boot between concurrent ensure calls', async () => {
    const threadId = randomUUID();
    const before = creates;
    await Promise.all([ensure(threadId), ensure(threadId), ensure(threadId)]);
    expect(creates - before).toBe(1);
    await ensure(threadId);
    expect(creates - before).toBe(1);
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

  it('runs a coding_alpha turn against the gateway behind the proxy', async () => {
    const threadId = randomUUID();
    const { workspaceDir } = await ensure(threadId);
    expect(runner.sandboxApiUrl(threadId)).toBe('http://127.0.0.1:8787');
    const events: DraftEvent[] = [];
    const result = await runner.runTurn(
      threadId,
      turnCommand('::sh echo hi > /workspace/x && cat /workspace/x'),
      (event) => events.push(event),
    );
    expect(result.error).toBeUndefined();
    expect(result.stopReason).toBe('end_turn');
    const ended = events.find((event) => event.type === 'tool_call.end');
    expect(ended?.data).toMatchObject({ status: 'ok', exit_code: 0 });
    expect(JSON.stringify(ended?.data)).toContain('hi');
    expect(await readFile(join(workspaceDir, 'x'), 'utf8')).toBe('hi\n');
    await runner.stop(threadId);
  });

  it('interrupts a running turn', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const command = turnCommand('::sleep 60000');
    const started = Date.now();
    const result = runner.runTurn(threadId, command, () => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    runner.interrupt(threadId, command.turn_id);
    expect((await result).stopReason).toBe('cancelled');
    expect(Date.now() - started).toBeLessThan(5_000);
    // The sandbox is still there for the next turn.
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    await runner.stop(threadId);
  });

  it('ends a turn whose sandbox dies with sandbox_exited, and boots a fresh sandbox next time', async () => {
    const threadId = randomUUID();
    await ensure(threadId);
    const result = await runner.runTurn(threadId, turnCommand('::sh kill -9 $PPID'), () => {});
    expect(result.stopReason).toBe('error');
    expect(result.error).toMatchObject({ code: 'sandbox_exited', retryable: true });
    expect(runner.isRunning(threadId)).toBe(false);
    const before = creates;
    await ensure(threadId);
    expect(creates - before).toBe(1);
    expect((await runner.runTurn(threadId, turnCommand('::sh true'), () => {})).stopReason).toBe('end_turn');
    await runner.stop(threadId);
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
});
