// The program a sandbox starts. Boot time is the product here: before `ready` only node builtins and
// small sibling modules load (all served from the compile cache); the harness, with the AI SDK behind
// it, is imported in the background afterwards.
import { readLines } from '../ndjson.ts';
import type { RunnerCommand } from '../protocol.ts';
import { runEntrypoint } from './entrypoint.ts';
import { startLoopbackProxy } from './loopback-proxy.ts';
import { sandboxEnv } from './sandbox-env.ts';
import { send } from './send.ts';
import { type HarnessModule, TurnRunner } from './turns.ts';

let harnessImport: Promise<HarnessModule> | undefined;
function loadHarnesses(): Promise<HarnessModule> {
  harnessImport ??= import('@paddock/harness') as Promise<unknown> as Promise<HarnessModule>;
  return harnessImport;
}

// `--warm` is the provider's warm-up run that fills the read-only compile cache sandboxes boot from.
if (process.argv.includes('--warm')) {
  await loadHarnesses()
    .then((harnesses) => harnesses.preloadHarnesses())
    .catch(() => {});
  process.exit(0);
}

const env = sandboxEnv();
const workspaceDir = process.env.PADDOCK_WORKSPACE ?? process.cwd();
const turns = new TurnRunner(loadHarnesses, workspaceDir, env);
let entrypoints: Promise<void> = Promise.resolve();
let proxyReady: Promise<void> = Promise.resolve();

readLines(process.stdin, (line) => {
  let command: RunnerCommand;
  try {
    command = JSON.parse(line) as RunnerCommand;
  } catch {
    send({ type: 'log', level: 'warn', message: `unparsable command: ${line.slice(0, 200)}` });
    return;
  }
  void handle(command);
});
// The runner is gone; nothing would read what we produce.
process.stdin.on('end', () => process.exit(0));
send({ type: 'ready', pid: process.pid });

const proxySocket = process.env.PADDOCK_PROXY_SOCKET;
if (proxySocket) {
  proxyReady = startLoopbackProxy(proxySocket).catch((error: unknown) => {
    send({ type: 'log', level: 'error', message: `loopback API proxy failed: ${String(error)}` });
  });
}
setImmediate(() => {
  loadHarnesses()
    .then((harnesses) => harnesses.preloadHarnesses())
    .catch((error: unknown) => {
      send({ type: 'log', level: 'warn', message: `harness import failed: ${String(error)}` });
    });
});
// A write to a runner that is gone fails with EPIPE; there is no one left to serve.
process.stdout.on('error', () => process.exit(0));
// An error that escapes the harness's promise (a stray stream or timer) must not kill the sandbox, but
// it does end the turn: the harness may never settle after it.
process.on('uncaughtException', (error) => {
  send({ type: 'log', level: 'error', message: `supervisor: ${error.stack ?? error.message}` });
  turns.crash(error);
});

async function handle(command: RunnerCommand): Promise<void> {
  switch (command.type) {
    case 'entrypoint':
      await proxyReady;
      entrypoints = entrypoints.then(() => runEntrypoint(command.script, workspaceDir, env));
      return;
    case 'turn':
      await proxyReady;
      await turns.run(command);
      return;
    case 'interrupt':
      turns.interrupt(command.turn_id);
      return;
    case 'shutdown':
      process.exit(0);
  }
}
