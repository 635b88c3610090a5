import type { SandboxHost } from '@paddock/core';
import { detectProvider, Runner } from '@paddock/sandbox';
import type { ModelMessage } from 'ai';
import type { Logger } from 'pino';

export interface StartedSandboxHost {
  host: SandboxHost;
  /** How sandboxes are isolated here, for the start-up log and capabilities. */
  isolation: string;
  shutdown(): Promise<void>;
}

/** The in-process runner behind core's SandboxHost seam, on the best provider this host offers. */
export async function startSandboxHost(options: {
  mode: 'auto' | 'bwrap' | 'process';
  stateDir: string;
  apiTarget: { host: string; port: number };
  /** The server's URL as the host sees it; providers without network isolation pass it straight in. */
  apiUrl: string;
  sandboxUid: number;
  logger: Logger;
}): Promise<StartedSandboxHost> {
  const log = (level: 'info' | 'warn' | 'error', message: string) =>
    options.logger[level]({ component: 'sandbox' }, message);
  const { provider, report } = await detectProvider({
    stateDir: options.stateDir,
    sandboxUid: options.sandboxUid,
    forceProcess: options.mode === 'process',
    log,
  });
  if (options.mode === 'bwrap' && report.kind !== 'bwrap') {
    throw new Error(`PADDOCK_SANDBOX=bwrap but bubblewrap cannot run here: ${report.reason}`);
  }
  if (report.reason) options.logger.warn({ reason: report.reason }, 'sandboxes run as plain processes');
  const runner = new Runner({ provider, stateDir: options.stateDir, apiTarget: options.apiTarget, log });
  const host: SandboxHost = {
    isRunning: (threadId) => runner.isRunning(threadId),
    apiUrl: (threadId) => runner.sandboxApiUrl(threadId) ?? options.apiUrl,
    ensure: (threadId, ensure) =>
      runner.ensure(threadId, { ...ensure, env: { ...ensure.env, PADDOCK_API_URL: options.apiUrl } }),
    runTurn: (threadId, command, onEvent) =>
      runner.runTurn(
        threadId,
        { type: 'turn', ...command, messages: command.messages as ModelMessage[] },
        onEvent,
      ),
    interrupt: (threadId, turnId) => runner.interrupt(threadId, turnId),
    steer: (threadId, turnId, messages) => runner.steer(threadId, turnId, messages),
  };
  return { host, isolation: report.isolation, shutdown: () => runner.shutdown() };
}
