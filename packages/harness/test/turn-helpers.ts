import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DraftEvent, HarnessProfile, TurnResult } from '@paddock/protocol';
import { testSandboxHands } from '@paddock/testing/supervisor';
import type { ModelMessage } from 'ai';
import { expect, vi } from 'vitest';
import { gatewayModels } from '../src/gateway-models.ts';
import type { GatewayAccess, Harness, SteeringInbox } from '../src/types.ts';

export async function tempDir(prefix = 'paddock-harness-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export interface TurnOptions {
  gateway: GatewayAccess;
  workspaceDir: string;
  model?: string;
  history?: ModelMessage[];
  env?: Record<string, string>;
  signal?: AbortSignal;
  inbox?: SteeringInbox;
  profile?: HarnessProfile;
}

export async function runTurn(
  harness: Harness,
  text: string,
  options: TurnOptions,
): Promise<TurnResult<ModelMessage> & { events: DraftEvent[]; input: ModelMessage[] }> {
  const events: DraftEvent[] = [];
  const input: ModelMessage[] = [...(options.history ?? []), { role: 'user', content: text }];
  const result = await harness.runTurn({
    turnId: 'turn-1',
    model: options.model ?? 'scripted',
    messages: input,
    // The loop calls the gateway as a runner of its own does; its tools act through a real supervisor.
    models: gatewayModels(options.gateway.baseURL, options.gateway.apiKey),
    gateway: options.gateway,
    sandbox: await testSandboxHands(),
    workspaceDir: options.workspaceDir,
    env: options.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: options.workspaceDir },
    signal: options.signal ?? new AbortController().signal,
    emit: (event) => events.push(event),
    inbox: options.inbox,
    profile: options.profile,
  });
  expectToolCallsClosed(events);
  return { ...result, events, input };
}

/** D6: every tool_call.start has exactly one matching tool_call.end, after it. */
export function expectToolCallsClosed(events: DraftEvent[]) {
  const open = new Set<string>();
  for (const event of events) {
    if (event.type === 'tool_call.start') {
      expect(event.tool_id).toBe(event.data.tool_id);
      open.add(event.data.tool_id);
    } else if (event.type === 'tool_call.end') {
      expect(event.tool_id).toBe(event.data.tool_id);
      expect(open.delete(event.data.tool_id)).toBe(true);
    }
  }
  expect([...open]).toEqual([]);
}

export function ofType<T extends DraftEvent['type']>(events: DraftEvent[], type: T) {
  return events.filter((e): e is Extract<DraftEvent, { type: T }> => e.type === type);
}

/** The text of a file once something has written it. */
export function waitForFile(path: string, timeoutMs = 5000): Promise<string> {
  return vi.waitFor(
    async () => {
      const text = await readFile(path, 'utf8').catch(() => '');
      if (!text.trim()) throw new Error(`${path} did not appear`);
      return text;
    },
    { timeout: timeoutMs, interval: 20 },
  );
}

/** Alive and not a zombie waiting to be reaped. */
export async function isProcessAlive(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  }
}
