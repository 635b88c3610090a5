import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { SandboxHands } from '@paddock/harness';
import { buildSupervisor, SupervisorClient, sandboxHands } from '@paddock/sandbox';

let started: Promise<{ hands: SandboxHands; client: SupervisorClient }> | undefined;

/**
 * The hands of a real supervisor, for tests of what acts through them (the harnesses' tools, their
 * ACP and MCP clients): the supervisor Paddock's sandboxes run, started as the process provider
 * starts it, a child process on this host, once per test worker.
 */
export function testSandboxHands(): Promise<SandboxHands> {
  return testSupervisor().then(({ hands }) => hands);
}

export function testSupervisor(): Promise<{ hands: SandboxHands; client: SupervisorClient }> {
  started ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-test-supervisor-'));
    const main = await buildSupervisor(join(dir, 'supervisor'));
    const child: ChildProcess = spawn(main, [], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    });
    // It ends with this process, and does not keep it alive (a script done with it exits).
    child.unref();
    for (const pipe of [child.stdin, child.stdout]) (pipe as Socket).unref();
    process.once('exit', () => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    const client = new SupervisorClient({
      input: child.stdin!,
      output: child.stdout!,
      onProtocolError: (reason) => {
        throw new Error(`the test supervisor broke the protocol: ${reason}`);
      },
    });
    await client.ready;
    return { hands: sandboxHands(client, dirname(process.execPath)), client };
  })();
  return started;
}
