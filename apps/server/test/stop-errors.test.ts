import { randomUUID } from 'node:crypto';
import { quarantineThread } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allEvents, createIdleThread, eventSeen, json, settled, turnStarted } from './helpers.ts';

interface Receipt {
  id: string;
  status: string;
  message_ids: string[];
}
interface StopRecord {
  sandbox_id: string | null;
  machine_id: string | null;
  generation: number;
  cancelled_inputs: Receipt[];
}

/** Holds the next turn that reaches its settle until the test releases it. */
function settleGate() {
  let reach!: (turnId: string) => void;
  let release!: () => void;
  const reached = new Promise<string>((resolve) => (reach = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  return {
    reached,
    release,
    hold(turnId: string) {
      reach(turnId);
      return released;
    },
  };
}

describe.each(testDatabases())('Stop errors on $name', (database) => {
  let server: TestServer;
  let gate: ReturnType<typeof settleGate> | undefined;
  const uninterruptible = new Set<string>();

  beforeAll(async () => {
    server = await startTestServer(
      database,
      {},
      {
        faults: {
          beforeSettle: async (turnId) => gate?.hold(turnId),
          canInterrupt: (threadId) => !uninterruptible.has(threadId),
        },
      },
    );
  });
  afterAll(() => server.close());

  const stop = (taskId: string) =>
    server.request('POST', `/v2/tasks/${taskId}/interrupt`, { body: { expected_generation: 0 } });

  /** Adds messages that wait for a next turn without starting one; answers their message id. */
  async function waitingMessage(taskId: string, content: string): Promise<string> {
    const appended = await json<{ messages: { id: string }[] }>(
      await server.request('POST', `/v2/threads/${taskId}/messages`, { body: { messages: [{ content }] } }),
      201,
    );
    return appended.messages[0]!.id;
  }

  async function inputStream(taskId: string) {
    return json<{ generation: number; active_turn_id: string | null; items: Receipt[] }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
  }

  /**
   * The refused Stop did not cancel the turn: it ends on its own. The same Stop then succeeds,
   * cancelling the waiting input and advancing the generation.
   */
  async function expectStopSucceedsOnceSettled(taskId: string, waitingId: string): Promise<void> {
    await settled(server, taskId);
    const ended = (await allEvents(server, taskId)).find((e) => e.type === 'turn.ended')!;
    expect(ended.data).toEqual({ stop_reason: 'end_turn' });
    const record = await json<StopRecord>(await stop(taskId), 200);
    expect(record.generation).toBe(1);
    expect(record.cancelled_inputs).toEqual([
      expect.objectContaining({ status: 'cancelled', message_ids: [waitingId] }),
    ]);
  }

  it('answers 409 turn_interrupt_pending while the turn finalizes, changes nothing, and the retry succeeds', async () => {
    const held = settleGate();
    gate = held;
    const taskId = await createIdleThread(server);
    try {
      await json(
        await server.request('POST', `/v2/tasks/${taskId}/inputs`, {
          body: { input_id: randomUUID(), messages: [{ content: 'hello' }] },
        }),
        201,
      );
      const turnId = await held.reached;
      const waitingId = await waitingMessage(taskId, 'later');
      const refused = await stop(taskId);
      expect(refused.status).toBe(409);
      expect(refused.headers.get('retry-after')).toBe('1');
      expect(await refused.json()).toEqual({
        detail: { code: 'turn_interrupt_pending', message: expect.any(String) },
      });
      const stream = await inputStream(taskId);
      expect(stream).toMatchObject({ generation: 0, active_turn_id: turnId });
      expect(stream.items.map((i) => i.status)).toEqual(['submitted', 'queued']);
      held.release();
      await expectStopSucceedsOnceSettled(taskId, waitingId);
    } finally {
      gate = undefined;
      held.release();
    }
  });

  it('answers 422 turn_interrupt_unsupported when the runtime cannot interrupt the turn, and the Stop succeeds once it finishes', async () => {
    const taskId = await createIdleThread(server);
    uninterruptible.add(taskId);
    await json(
      await server.request('POST', `/v2/tasks/${taskId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: '::sleep 1500\nslow' }] },
      }),
      201,
    );
    await turnStarted(server, taskId);
    const waitingId = await waitingMessage(taskId, 'later');
    const refused = await stop(taskId);
    expect(refused.status).toBe(422);
    expect(refused.headers.get('retry-after')).toBeNull();
    expect(await refused.json()).toEqual({
      detail: { code: 'turn_interrupt_unsupported', message: expect.any(String) },
    });
    const stream = await inputStream(taskId);
    expect(stream.generation).toBe(0);
    expect(stream.items.map((i) => i.status)).toEqual(['submitted', 'queued']);
    await expectStopSucceedsOnceSettled(taskId, waitingId);
  });

  it('names the running sandbox and the machine it runs on in the task record', async () => {
    const taskId = await createIdleThread(server);
    const interrupt = () => server.request('POST', `/v2/tasks/${taskId}/interrupt`);
    // No sandbox has booted for the task yet.
    expect(await json<StopRecord>(await interrupt(), 200)).toMatchObject({
      sandbox_id: null,
      machine_id: null,
    });
    await json(
      await server.request('POST', `/v2/tasks/${taskId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: '::sh sleep 30' }] },
      }),
      201,
    );
    await eventSeen(server, taskId, 'tool_call.start');
    const record = await json<StopRecord>(await interrupt(), 200);
    expect(record.sandbox_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    // An in-process sandbox runs on this server node.
    expect(record.machine_id).toBe(server.paddock.services.nodeId);
    await settled(server, taskId);
    // The sandbox outlives the stopped turn: the next Stop names the same one.
    expect(await json<StopRecord>(await interrupt(), 200)).toMatchObject({
      sandbox_id: record.sandbox_id,
      machine_id: record.machine_id,
    });
  });

  it('answers 409 task_recovery_required to Stop and new inputs of a quarantined or retired task', async () => {
    const quarantined = await createIdleThread(server);
    const retired = await createIdleThread(server);
    const replacement = await createIdleThread(server);
    const { db } = server.paddock.services.store;
    await quarantineThread(db, quarantined, { state: 'quarantined', replacementTaskId: null });
    await quarantineThread(db, retired, { state: 'retired', replacementTaskId: replacement });
    for (const [taskId, replacementId] of [
      [quarantined, null],
      [retired, replacement],
    ] as const) {
      const detail = {
        code: 'task_recovery_required',
        message: expect.any(String),
        replacement_task_id: replacementId,
      };
      const refused = await stop(taskId);
      expect(refused.status).toBe(409);
      expect(refused.headers.get('retry-after')).toBeNull();
      expect(await refused.json()).toEqual({ detail });
      const input = await server.request('POST', `/v2/tasks/${taskId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: 'x' }] },
      });
      expect(await json(input, 409)).toEqual({ detail });
      const run = await server.request('POST', `/v2/threads/${taskId}/messages`, {
        body: { messages: [{ content: 'x' }], run: true },
      });
      expect(await json(run, 409)).toEqual({ detail });
      expect(await inputStream(taskId)).toMatchObject({ generation: 0, items: [] });
    }
    // The replacement is an ordinary task.
    await json(await stop(replacement), 200);
  });
});
