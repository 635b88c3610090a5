/** The runner hub with a fake of its WebSocket seam only: everything else is the real hub. */
import { EventEmitter } from 'node:events';
import type { SandboxBoot } from '@paddock/core';
import type { DraftEvent } from '@paddock/protocol';
import type { RunnerMessage, ServerMessage } from '@paddock/sandbox';
import {
  type HeldTurn,
  RunnerHub,
  type RunnerHubOptions,
} from '../../src/sandbox-hosts/runner-hub/runner-hub.ts';

/** The WebSocket seam only: what the hub sends is recorded, what the runner sends is emitted. */
export class FakeSocket extends EventEmitter {
  readonly sent: ServerMessage[] = [];
  closed?: { code?: number; reason?: string };

  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }

  close(code?: number, reason?: string): void {
    if (this.closed) return;
    this.closed = { code, reason };
    queueMicrotask(() => this.emit('close'));
  }

  terminate(): void {
    this.close(1006);
  }

  /** A frame from the runner, as text (it may be no message at all). */
  receive(frame: RunnerMessage | unknown): void {
    this.emit('message', Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame)));
  }

  of<T extends ServerMessage['type']>(type: T): Extract<ServerMessage, { type: T }>[] {
    return this.sent.filter((m): m is Extract<ServerMessage, { type: T }> => m.type === type);
  }
}

export const event = (text: string): DraftEvent => ({
  type: 'assistant.message.chunk',
  data: { content: [{ type: 'text', content: text }] },
});
export const endTurn = { stopReason: 'end_turn' as const, messages: [], lastAssistantText: 'done' };
export const command = (turnId: string) => ({
  turn_id: turnId,
  harness: 'coding_alpha',
  model: 'scripted',
  messages: [],
});
export const codeRun = {
  op: 'run' as const,
  language: 'bash' as const,
  code: 'true',
  timeout_ms: 1_000,
  output_limit_bytes: 10,
};
export const ensureOptions = (statuses: unknown[] = []): SandboxBoot => ({
  workspaceDir: '/w',
  env: {},
  size: 'S',
  onStatus: (status) => statuses.push(status),
  onEntrypointOutput: () => {},
});

type HubSetup = Partial<Omit<RunnerHubOptions, 'timings'>> & {
  timings?: Partial<RunnerHubOptions['timings']>;
};

export function makeHub(options: HubSetup = {}) {
  const adopted: HeldTurn[] = [];
  const reconciled: [string, string[]][] = [];
  const logged: { level: string; message: string }[] = [];
  const log = (level: string) => (_fields: object, message: string) => logged.push({ level, message });
  const hub = new RunnerHub({
    adopt: async (turn) => {
      adopted.push(turn);
      return true;
    },
    reconcile: async (runnerId, held) => {
      reconciled.push([runnerId, [...held]]);
    },
    ...options,
    logger: { info: log('info'), warn: log('warn'), error: log('error') },
    timings: { lostAfterMs: 1_000, waitForRunnerMs: 50, ...options.timings },
  });
  return { hub, adopted, reconciled, logged };
}

/** A runner connected to the hub and said hello. */
export function connect(
  hub: RunnerHub,
  runnerId: string,
  held: { sandboxes?: string[]; turns?: { turn_id: string; thread_id: string }[] } = {},
  agentId?: string,
): FakeSocket {
  const socket = new FakeSocket();
  hub.accept(socket, { agentId });
  socket.receive({ type: 'hello', runner_id: runnerId, sandboxes: [], turns: [], ...held });
  return socket;
}

/** Lets the hub's promise chains (stores, acknowledgements, adoption) run. */
export const settle = () => new Promise((resolve) => setImmediate(resolve));
