import { setTimeout as sleep } from 'node:timers/promises';
import { newId, timestamp } from '@paddock/protocol';
import { allocateInputSequence, insertInput } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { allEvents, createIdleThread, json, settled, transcript, turnStarted } from './helpers.ts';

/**
 * The state a server killed right after an input's 201 leaves behind: the input steered at the
 * running turn is stored `queued`, and the offer that would have claimed it never happened.
 */
async function inputLeftByADeadServer(
  server: TestServer,
  threadId: string,
  content: string,
): Promise<string> {
  const { db } = server.paddock.services.store;
  const at = timestamp();
  const id = newId();
  await insertInput(db, {
    id,
    thread_id: threadId,
    status: 'queued',
    reason: null,
    turn_id: null,
    generation: 0,
    sequence: await allocateInputSequence(db, threadId),
    messages: JSON.stringify([{ id: newId(), role: 'user', content }]),
    created_at: at,
    updated_at: at,
  });
  return id;
}

async function receiptStatus(server: TestServer, threadId: string, inputId: string): Promise<string> {
  const receipt = await json<{ status: string }>(
    await server.request('GET', `/v2/tasks/${threadId}/inputs/${inputId}`),
    200,
  );
  return receipt.status;
}

/** Waits until the input was taken by a turn and that turn settled; answers its receipt status then. */
async function taken(server: TestServer, threadId: string, inputId: string): Promise<string> {
  const status = await vi.waitFor(
    async () => {
      const status = await receiptStatus(server, threadId, inputId);
      if (status === 'queued') throw new Error(`input ${inputId} is still queued`);
      return status;
    },
    { timeout: 20_000, interval: 50 },
  );
  await settled(server, threadId);
  return status;
}

/** The turn worker's sweep, which takes what the inputs below were left without. */
const sweepMs = 200;

describe.each(testDatabases())('an input waiting for a turn always gets one, on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, {
      PADDOCK_LEASE_TTL_MS: '900',
      PADDOCK_SWEEP_MS: String(sweepMs),
    });
  });
  afterAll(() => server.close());

  it('the end of the running turn queues the next turn for an input it never took', async () => {
    const threadId = await createIdleThread(server);
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: newId(), messages: [{ content: '::sleep 1200\nfirst' }] },
      }),
      201,
    );
    await turnStarted(server, threadId);
    const inputId = await inputLeftByADeadServer(server, threadId, 'left behind');
    expect(await taken(server, threadId, inputId)).toBe('submitted');
    expect((await transcript(server, threadId)).filter((c) => c === 'left behind')).toHaveLength(1);
    expect((await allEvents(server, threadId)).filter((e) => e.type === 'turn.started')).toHaveLength(2);
  });

  it('the sweep of a dead server’s turn queues the next turn for an input it never took', async () => {
    const threadId = await createIdleThread(server);
    const { db } = server.paddock.services.store;
    const past = timestamp(new Date(Date.now() - 60_000));
    // A turn of an in-process runner whose server died: nobody renews its lease.
    await db
      .insertInto('turns')
      .values({
        id: newId(),
        thread_id: threadId,
        status: 'running',
        generation: 0,
        lease_owner: 'worker-of-a-dead-server',
        lease_expires_at: past,
        stop_reason: null,
        created_at: past,
        started_at: past,
        ended_at: null,
      })
      .execute();
    await db.updateTable('threads').set({ status: 'running' }).where('id', '=', threadId).execute();
    const inputId = await inputLeftByADeadServer(server, threadId, 'after the crash');
    expect(await taken(server, threadId, inputId)).toBe('submitted');
    const events = await allEvents(server, threadId);
    expect(events.find((e) => e.type === 'error')?.data).toMatchObject({ code: 'lease_expired' });
    expect((await transcript(server, threadId)).filter((c) => c === 'after the crash')).toHaveLength(1);
  });

  it('repairs an input an older version left queued with no turn at all', async () => {
    const threadId = await createIdleThread(server);
    const inputId = await inputLeftByADeadServer(server, threadId, 'stranded long ago');
    expect(await taken(server, threadId, inputId)).toBe('submitted');
    expect(await transcript(server, threadId)).toEqual(['stranded long ago', 'You said: stranded long ago']);
  });

  it('still keeps a message sent without run for the next turn, without starting one', async () => {
    const threadId = await createIdleThread(server);
    await json(
      await server.request('POST', `/v2/threads/${threadId}/messages`, {
        body: { messages: [{ content: '::sleep 600\nbusy' }], run: true },
      }),
      201,
    );
    await turnStarted(server, threadId);
    await json(
      await server.request('POST', `/v2/threads/${threadId}/messages`, {
        body: { messages: [{ content: 'later' }] },
      }),
      201,
    );
    await settled(server, threadId);
    await sleep(3 * sweepMs); // sweeps and their repairs have run
    expect(
      (await json<{ status: string }>(await server.request('GET', `/v2/threads/${threadId}`), 200)).status,
    ).toBe('idle');
    expect((await allEvents(server, threadId)).filter((e) => e.type === 'turn.started')).toHaveLength(1);
    expect(await transcript(server, threadId)).not.toContain('later');
  });
});
