// The program a sandbox starts. Boot time is the product here: before `ready` only node builtins and
// small sibling modules load (all served from the compile cache); the harness, with the AI SDK behind
// it, is imported (and warmed) in the background afterwards.
//
// It reads no environment of its own: the thread's arrives with `configure`, so that a sandbox can
// boot (and preload the harness) before anyone knows which thread it will serve, and so that secrets
// never sit in the supervisor's own environment.

import { RunProcesses, readLines, startLoopbackProxy, withRun } from '@paddock/supervisor';
import type { RunnerCommand } from '../protocol.ts';
import { runEntrypoint } from './entrypoint.ts';
import { parseFlags } from './flags.ts';
import { McpServers } from './mcp/mcp-servers.ts';
import { send } from './send.ts';
import { type HarnessModule, type SandboxContext, TurnRunner } from './turns.ts';
import { warmFirstTurn } from './warm-first-turn.ts';

let harnessImport: Promise<HarnessModule> | undefined;
function loadHarnesses(): Promise<HarnessModule> {
  harnessImport ??= import('@paddock/harness') as Promise<unknown> as Promise<HarnessModule>;
  return harnessImport;
}

const flags = parseFlags(process.argv.slice(2));
if (flags.warm) {
  await loadHarnesses()
    .then((harnesses) => harnesses.preloadHarnesses())
    .catch(() => {});
  process.exit(0);
}

const runs = new RunProcesses({ ownPids: flags.ownPids });
const mcp = new McpServers(runs);
const turns = new TurnRunner(loadHarnesses, runs, mcp);
const configured = Promise.withResolvers<SandboxContext>();
/** Aborted by `configure`: from then on a thread waits, and warming up would only compete with it. */
const claimed = new AbortController();
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
process.stdin.on('end', () => void stop());
send({ type: 'ready', pid: process.pid });

if (flags.proxySocket) {
  proxyReady = startLoopbackProxy(flags.proxySocket).catch((error: unknown) => {
    send({ type: 'log', level: 'error', message: `loopback API proxy failed: ${String(error)}` });
  });
} else if (flags.apiPort) {
  const portPath = flags.apiPort;
  proxyReady = import('@paddock/supervisor')
    .then(({ startPortProxy }) => startPortProxy(portPath))
    .catch((error: unknown) => {
      send({ type: 'log', level: 'error', message: `API port proxy failed: ${String(error)}` });
    });
}
if (flags.egressSocket || flags.egressPort) {
  const { egressSocket, egressPort } = flags;
  const egressReady = import('@paddock/supervisor')
    .then(async ({ socketUpstream, startEgressPort }) => {
      if (egressSocket) return startEgressPort(socketUpstream(egressSocket));
      const { openPortStreams } = await import('@paddock/supervisor');
      const port = openPortStreams(egressPort!);
      return startEgressPort((client, head) => port.open(client, head));
    })
    .then(
      () => {},
      (error: unknown) => {
        send({ type: 'log', level: 'error', message: `egress port failed: ${String(error)}` });
      },
    );
  proxyReady = Promise.all([proxyReady, egressReady]).then(() => {});
}
setImmediate(() => void preloadAndWarm());
// A write to a runner that is gone fails with EPIPE; there is no one left to serve.
process.stdout.on('error', () => process.exit(0));
// An error that escapes the harness's promise (a stray stream or timer) must not kill the sandbox, but
// it does end the turn: the harness may never settle after it.
process.on('uncaughtException', (error) => {
  send({ type: 'log', level: 'error', message: `supervisor: ${error.stack ?? error.message}` });
  turns.crash(error);
});

async function preloadAndWarm(): Promise<void> {
  try {
    const harnesses = await loadHarnesses();
    await harnesses.preloadHarnesses();
    // A sandbox already claimed has a turn coming, which warms what it needs and wants the CPU now.
    if (claimed.signal.aborted) send({ type: 'warm' });
    else await warmFirstTurn(harnesses, claimed.signal, () => send({ type: 'warm' }));
  } catch (error) {
    send({ type: 'log', level: 'warn', message: `harness warm-up failed: ${String(error)}` });
  }
}

async function handle(command: RunnerCommand): Promise<void> {
  switch (command.type) {
    case 'configure': {
      if (claimed.signal.aborted) {
        send({
          type: 'log',
          level: 'warn',
          message: 'configure ignored: this sandbox is already configured',
        });
        return;
      }
      // The process provider's workspace has no fixed path (a claimed standby's directory is renamed
      // into place), so without the flag the thread's PADDOCK_WORKSPACE names it.
      const workspaceDir = flags.workspace ?? command.env.PADDOCK_WORKSPACE ?? process.cwd();
      claimed.abort();
      configured.resolve({ env: command.env, workspaceDir });
      return;
    }
    case 'entrypoint': {
      const { env, workspaceDir } = await configured.promise;
      await proxyReady;
      entrypoints = entrypoints.then(() => runEntrypoint(command.script, workspaceDir, env));
      return;
    }
    case 'turn':
      // Programs a standby started for other harness values serve no one now.
      void loadHarnesses().then((harnesses) => harnesses.dropStandbyAgents(command.harness));
      await turns.run(
        command,
        configured.promise.then((context) => proxyReady.then(() => context)),
      );
      return;
    case 'interrupt':
      turns.interrupt(command.turn_id);
      return;
    case 'steer': {
      const delivered = await turns.steer(command.turn_id, command.messages);
      send({ type: 'steer.result', steer_id: command.steer_id, delivered });
      return;
    }
    case 'exec': {
      const context = await configured.promise;
      await proxyReady;
      // Marked as a code run's, so a Stop of a turn running beside it leaves its processes alone.
      const run = runs.begin('code');
      const answer = await import('./exec.ts')
        .then(({ execute }) => execute(command.request, { ...context, env: withRun(context.env, run) }))
        .then(
          (result) => ({ result }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        )
        .finally(() => runs.end(run));
      send({ type: 'exec.result', exec_id: command.exec_id, ...answer });
      return;
    }
    case 'start.agents': {
      // Only a sandbox still waiting for its thread, with its workspace at a fixed path.
      const workspaceDir = flags.workspace;
      const started: string[] = [];
      const harnesses = await loadHarnesses();
      // One at a time: each start takes a core for a second or more.
      for (const { name, profile } of command.harnesses) {
        if (claimed.signal.aborted || !workspaceDir) break;
        try {
          await harnesses.getHarness(name)?.warmUp?.({ profile, env: command.env, workspaceDir });
          started.push(name);
        } catch (error) {
          send({ type: 'log', level: 'warn', message: `${name} not started ahead: ${String(error)}` });
        }
      }
      send({ type: 'agents.started', harnesses: started });
      return;
    }
    case 'shutdown':
      await stop();
  }
}

/** How long the MCP servers get to close when the sandbox stops. */
const mcpCloseMs = 2_000;

/** The sandbox stops: its MCP servers are closed first (briefly: the sandbox's end kills them anyway). */
async function stop(): Promise<never> {
  await Promise.race([mcp.close(), new Promise((resolve) => setTimeout(resolve, mcpCloseMs))]);
  process.exit(0);
}
