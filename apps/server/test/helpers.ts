import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { mintToken } from '@paddock/core';
import type { Scope, ThreadEvent } from '@paddock/protocol';
import type { TestServer } from '@paddock/testing/server';
import { expect, vi } from 'vitest';

/** Anything that answers API requests: an in-process test server or a deployment of processes. */
type Api = Pick<TestServer, 'request'>;

export async function json<T = Record<string, unknown>>(response: Response, status: number): Promise<T> {
  const body = await response.text();
  expect(response.status, body).toBe(status);
  return JSON.parse(body) as T;
}

/**
 * Stops a task the way the spec tells a client to: a 409 `turn_interrupt_pending` (the turn is
 * starting or finalizing) is retried with the same body after its `Retry-After`. Answers the
 * first other response.
 */
export async function stopTask(
  server: Api,
  taskId: string,
  body: unknown,
  headers?: Record<string, string>,
): Promise<Response> {
  for (;;) {
    const response = await server.request('POST', `/v2/tasks/${taskId}/interrupt`, { body, headers });
    if (response.status !== 409) return response;
    const text = await response.clone().text();
    if (!text.includes('"turn_interrupt_pending"')) return response;
    await new Promise((resolve) =>
      setTimeout(resolve, Number(response.headers.get('retry-after') ?? 1) * 1000),
    );
  }
}

/** Waits until the thread is settled (not running) and answers it. */
export function settled(server: Api, threadId: string, timeoutMs = 20_000) {
  return vi.waitFor(
    async () => {
      const thread = await json<{ status: string; title: string; agent_id: string }>(
        await server.request('GET', `/v2/threads/${threadId}`),
        200,
      );
      if (thread.status === 'running')
        throw new Error(`thread ${threadId} still running after ${timeoutMs} ms`);
      return thread;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

export async function allEvents(server: Api, threadId: string): Promise<ThreadEvent[]> {
  const page = await json<{ items: ThreadEvent[] }>(
    await server.request('GET', `/v2/threads/${threadId}/events?limit=1000`),
    200,
  );
  return page.items;
}

/** Event types in order, with chunk runs collapsed, for asserting a turn's shape. */
export function shape(events: ThreadEvent[]): string[] {
  return events
    .map((e) => e.type)
    .filter((t, i, all) => !(t === 'assistant.message.chunk' && all[i - 1] === t));
}

export function agentSpec(overrides: Record<string, unknown> = {}) {
  return { instructions: 'You are a test agent.', ...overrides };
}

/** Creates a thread with no input, so no turn runs until the test sends one; answers its id. */
export async function createIdleThread(server: Api): Promise<string> {
  const { thread_id } = await json<{ thread_id: string }>(
    await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
    201,
  );
  return thread_id;
}

/** Waits until the thread's event log holds an event of this type. */
export async function eventSeen(server: Api, threadId: string, type: string): Promise<void> {
  await vi.waitFor(
    async () => {
      if (!(await allEvents(server, threadId)).some((e) => e.type === type))
        throw new Error(`no ${type} event on thread ${threadId}`);
    },
    { timeout: 10_000, interval: 20 },
  );
}

export const turnStarted = (server: Api, threadId: string) => eventSeen(server, threadId, 'turn.started');

/** The transcript's message contents, in order. */
export async function transcript(server: Api, threadId: string): Promise<string[]> {
  const page = await json<{ items: { content: string }[] }>(
    await server.request('GET', `/v2/threads/${threadId}/messages`),
    200,
  );
  return page.items.map((m) => m.content);
}

/**
 * The thread's sandbox credential (thread-bound, with the internal scopes a sandbox gets): a turn
 * writes its `$PADDOCK_TOKEN` into the workspace, read here from the host side.
 */
export async function sandboxToken(server: Api & { dataDir: string }, threadId: string): Promise<string> {
  await json(
    await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: '::sh echo -n $PADDOCK_TOKEN > token.txt' }] },
    }),
    201,
  );
  await settled(server, threadId);
  return readFile(join(server.dataDir, 'workspaces', threadId, 'token.txt'), 'utf8');
}

/** A personal access token of the admin with only these scopes. */
export async function adminTokenWith(server: TestServer, scopes: Scope[]): Promise<string> {
  const { store } = server.paddock.services;
  const admin = await store.db
    .selectFrom('users')
    .select('id')
    .where('username', '=', 'admin')
    .executeTakeFirstOrThrow();
  return (await mintToken(store.db, { kind: 'pat', userId: admin.id, name: scopes.join(','), scopes })).token;
}

/** Pids of the host's processes whose command line is exactly `argv` (sandboxes' included). */
export function hostProcesses(argv: string[]): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8') === `${argv.join('\0')}\0`;
      } catch {
        return false;
      }
    })
    .map(Number);
}

/**
 * Sends a request again (every 50 ms, up to `timeoutMs`) until its status passes `wanted`, and
 * answers that response; the last one's status is the error if none does.
 */
export function answerWhen(
  send: () => Promise<Response>,
  wanted: (status: number) => boolean,
  timeoutMs = 10_000,
): Promise<Response> {
  return vi.waitFor(
    async () => {
      const response = await send();
      if (!wanted(response.status)) throw new Error(`still answers ${response.status}`);
      return response;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}
