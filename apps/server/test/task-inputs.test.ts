import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  allEvents,
  createIdleThread,
  eventSeen,
  json,
  settled,
  stopTask,
  transcript,
  turnStarted,
} from './helpers.ts';

interface Receipt {
  id: string;
  task_id: string;
  status: string;
  turn_id: string | null;
  generation: number;
  sequence: number;
  message_ids: string[];
}
interface Submitted {
  input: Receipt;
  messages: { id: string; task_id: string; role: string; content: string }[];
  run_started: boolean;
  accepted_turn_id: string | null;
}

describe.each(testDatabases())('task inputs on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server.close());

  const idleThread = () => createIdleThread(server);

  const post = (taskId: string, body: unknown) =>
    server.request('POST', `/v2/tasks/${taskId}/inputs`, { body });

  it('answers a durable receipt and starts a turn on an idle task; the turn takes it', async () => {
    const taskId = await idleThread();
    const inputId = randomUUID();
    const response = await post(taskId, { input_id: inputId, messages: [{ content: 'hello there' }] });
    expect(response.headers.get('idempotency-replayed')).toBeNull();
    const submitted = await json<Submitted>(response, 201);
    expect(submitted.input).toMatchObject({
      id: inputId,
      task_id: taskId,
      status: 'queued',
      turn_id: null,
      generation: 0,
    });
    expect(submitted.run_started).toBe(true);
    expect(submitted.accepted_turn_id).toEqual(expect.any(String));
    expect(submitted.messages).toEqual([
      expect.objectContaining({
        id: submitted.input.message_ids[0],
        task_id: taskId,
        role: 'user',
        content: 'hello there',
      }),
    ]);
    await settled(server, taskId);
    const receipt = await json<Receipt>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs/${inputId}`),
      200,
    );
    expect(receipt).toMatchObject({ status: 'submitted', turn_id: submitted.accepted_turn_id, sequence: 1 });
    const stream = await json<{ generation: number; active_turn_id: string | null; items: Receipt[] }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    expect(stream).toMatchObject({ generation: 0, active_turn_id: null, items: [{ id: inputId }] });
  });

  it('replays a retry with the same input_id and messages, and refuses other messages under it', async () => {
    const taskId = await idleThread();
    const body = { input_id: randomUUID(), messages: [{ content: 'only once' }] };
    const first = await json<Submitted>(await post(taskId, body), 201);
    const retry = await post(taskId, body);
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    const replayed = await json<Submitted>(retry, 201);
    expect(replayed.input.id).toBe(first.input.id);
    expect(replayed.input.message_ids).toEqual(first.input.message_ids);
    expect(replayed.run_started).toBe(false);
    const reused = await json<{ detail: { code: string } }>(
      await post(taskId, { ...body, messages: [{ content: 'something else' }] }),
      409,
    );
    expect(reused.detail.code).toBe('idempotency_key_reused');
    await settled(server, taskId);
    const delivered = (await allEvents(server, taskId)).filter((e) => e.type === 'user.message');
    expect(delivered.map((e) => e.data.content)).toEqual(['only once']);
  });

  it('answers 50 concurrent retries of one input with one receipt and one delivery', async () => {
    const taskId = await idleThread();
    const body = { input_id: randomUUID(), messages: [{ content: 'raced' }] };
    const answers = await Promise.all(Array.from({ length: 50 }, () => post(taskId, body)));
    expect(answers.map((a) => a.status)).toEqual(Array(50).fill(201));
    const bodies = await Promise.all(answers.map((a) => a.json() as Promise<Submitted>));
    expect(new Set(bodies.map((b) => b.input.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    await settled(server, taskId);
    const stream = await json<{ items: Receipt[] }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    expect(stream.items).toHaveLength(1);
    const delivered = (await allEvents(server, taskId)).filter((e) => e.type === 'user.message');
    expect(delivered).toHaveLength(1);
    expect((await allEvents(server, taskId)).filter((e) => e.type === 'turn.started')).toHaveLength(1);
  });

  it('lets a Stop racing a burst of inputs cancel or deliver each one, never both and never neither', async () => {
    const taskId = await idleThread();
    await json(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: '::sh sleep 0.3; echo busy' }] }),
      201,
    );
    await turnStarted(server, taskId);
    const bodies = Array.from({ length: 30 }, (_, i) => ({
      input_id: randomUUID(),
      messages: [{ content: `burst ${i}` }],
      expected_generation: 0,
    }));
    const posting = bodies.map(async (body, i) => {
      await sleep(i * 10);
      return post(taskId, body);
    });
    // A Stop that lands while the first turn finalizes is retried, as the spec says.
    const stopping = sleep(120).then(() => stopTask(server, taskId, { expected_generation: 0 }));
    const answers = await Promise.all(posting);
    const stop = await stopping;
    const record = await json<{ generation: number; cancelled_inputs: Receipt[] }>(stop, 200);
    const accepted = bodies.filter((_, i) => answers[i]!.status === 201);
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 201) continue;
      // Sent after the Stop: fenced off by its generation, never received.
      expect(
        (await json<{ detail: { code: string } }>(answer, 409)).detail.code,
        bodies[i]!.messages[0]!.content,
      ).toBe('input_generation_stale');
    }
    expect(accepted.length).toBeGreaterThan(0);
    await settled(server, taskId);
    const cancelled = new Set(record.cancelled_inputs.map((r) => r.id));
    const contents = await transcript(server, taskId);
    const stream = await json<{ items: Receipt[] }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    for (const body of accepted) {
      const text = body.messages[0]!.content;
      const delivered = contents.filter((c) => c === text).length;
      const receipt = stream.items.find((r) => r.id === body.input_id)!;
      expect(delivered + (cancelled.has(body.input_id) ? 1 : 0), `${text} (${receipt.status})`).toBe(1);
      expect(receipt.status, text).toBe(cancelled.has(body.input_id) ? 'cancelled' : 'submitted');
    }
  });

  it('fences inputs by generation: stale after a Stop is 409, ahead is 400, and neither writes', async () => {
    const taskId = await idleThread();
    await json(await server.request('POST', `/v2/tasks/${taskId}/interrupt`, { body: {} }), 200);
    const stale = await json<{ detail: { code: string } }>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: 'x' }], expected_generation: 0 }),
      409,
    );
    expect(stale.detail.code).toBe('input_generation_stale');
    const ahead = await json<{ detail: { code: string } }>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: 'x' }], expected_generation: 5 }),
      400,
    );
    expect(ahead.detail.code).toBe('invalid_input_generation');
    const stream = await json<{ generation: number; items: Receipt[] }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    expect(stream).toMatchObject({ generation: 1, items: [] });
    const current = await json<Submitted>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: 'now' }], expected_generation: 1 }),
      201,
    );
    expect(current.input.generation).toBe(1);
  });

  it('steers an input sent during a turn into that turn, in the order the model saw it', async () => {
    const taskId = await idleThread();
    const first = await json<Submitted>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: '::sh sleep 0.5; echo one' }] }),
      201,
    );
    // Sent while the shell tool runs: it joins at the next step, after the tool's result.
    await eventSeen(server, taskId, 'tool_call.start');
    const during = await json<{ active_turn_id: string | null }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    expect(during.active_turn_id).toBe(first.accepted_turn_id);
    const steered = await json<Submitted>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: 'steered' }] }),
      201,
    );
    expect(steered).toMatchObject({ run_started: false, accepted_turn_id: first.accepted_turn_id });
    await settled(server, taskId);
    const events = await allEvents(server, taskId);
    expect(events.filter((e) => e.type === 'turn.started')).toHaveLength(1);
    const types = events.map((e) => e.type);
    const steeredAt = events.findIndex((e) => e.type === 'user.message' && e.data.content === 'steered');
    expect(steeredAt).toBeGreaterThan(types.indexOf('tool_call.end'));
    expect(steeredAt).toBeLessThan(types.lastIndexOf('assistant.message'));
    expect(events[steeredAt]!.data.message_id).toBe(steered.input.message_ids[0]);
    const receipt = await json<Receipt>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs/${steered.input.id}`),
      200,
    );
    expect(receipt).toMatchObject({ status: 'submitted', turn_id: first.accepted_turn_id });
    const transcript = await json<{ items: { id: string; content: string }[] }>(
      await server.request('GET', `/v2/threads/${taskId}/messages`),
      200,
    );
    expect(transcript.items.map((m) => m.content)).toEqual([
      '::sh sleep 0.5; echo one',
      'steered',
      'You said: steered',
    ]);
    expect(transcript.items[1]!.id).toBe(steered.input.message_ids[0]);
  });

  it('does not steer past a follow-up that already waits: the input takes the next turn after it', async () => {
    const taskId = await idleThread();
    await json(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: '::sleep 600\nfirst' }] }),
      201,
    );
    await turnStarted(server, taskId);
    await json(
      await server.request('POST', `/v2/threads/${taskId}/messages`, {
        body: { messages: [{ content: 'waiting' }] },
      }),
      201,
    );
    const later = await json<Submitted>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: 'after it' }] }),
      201,
    );
    const stream = await json<{ active_turn_id: string }>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs`),
      200,
    );
    expect(later.accepted_turn_id).not.toBe(stream.active_turn_id);
    await settled(server, taskId);
    expect(await transcript(server, taskId)).toEqual([
      '::sleep 600\nfirst',
      'You said: first',
      'waiting',
      'after it',
      'You said: after it',
    ]);
    const receipt = await json<Receipt>(
      await server.request('GET', `/v2/tasks/${taskId}/inputs/${later.input.id}`),
      200,
    );
    expect(receipt).toMatchObject({ status: 'submitted', turn_id: later.accepted_turn_id });
  });

  it('takes model_options: the turn that takes the input applies them, and a retry must repeat them', async () => {
    const taskId = await idleThread();
    const first = await json<Submitted>(
      await post(taskId, { input_id: randomUUID(), messages: [{ content: '::sh sleep 0.5; echo one' }] }),
      201,
    );
    await eventSeen(server, taskId, 'tool_call.start');
    // Kept as given, an unknown field included; `max_tokens` is read as `max_output_tokens`.
    const options = { temperature: 0.25, top_p: 0.5, max_tokens: 64, reasoning_effort: 'low', tier: 'x' };
    const body = { input_id: randomUUID(), messages: [{ content: '::options' }], model_options: options };
    const sent = await json<Submitted>(await post(taskId, body), 201);
    // Not steered into the running turn, whose settings are fixed: it waits for the next one.
    expect(sent).toMatchObject({ run_started: false });
    expect(sent.accepted_turn_id).not.toBe(first.accepted_turn_id);
    await settled(server, taskId);
    const plain = { input_id: randomUUID(), messages: [{ content: '::options' }] };
    await json(await post(taskId, plain), 201);
    await settled(server, taskId);
    const contents = await transcript(server, taskId);
    expect(contents.slice(2)).toEqual([
      '::options',
      'options: {"temperature":0.25,"top_p":0.5,"max_output_tokens":64,"reasoning_effort":"low"}',
      '::options',
      'options: {}',
    ]);
    expect(contents[1]).not.toContain('options');

    // The same options in another key order replay; other options, or none, are another input.
    const reordered = { tier: 'x', reasoning_effort: 'low', max_tokens: 64, top_p: 0.5, temperature: 0.25 };
    const retry = await post(taskId, { ...body, model_options: reordered });
    expect(retry.headers.get('idempotency-replayed')).toBe('true');
    expect((await json<Submitted>(retry, 201)).input.id).toBe(body.input_id);
    for (const other of [{ ...options, temperature: 0.3 }, { ...options, tier: 'y' }, undefined]) {
      const reused = await json<{ detail: { code: string } }>(
        await post(taskId, { ...body, model_options: other }),
        409,
      );
      expect(reused.detail.code, JSON.stringify(other)).toBe('idempotency_key_reused');
    }
    const refused = await json<{ detail: { code: string } }>(
      await post(taskId, { ...plain, model_options: { temperature: 1 } }),
      409,
    );
    expect(refused.detail.code).toBe('idempotency_key_reused');

    // A cancelled input shows its model_options, as given, beside its messages.
    // The long turn has taken its own input (earlier turns' events would not say so), and runs until the Stop.
    const sleeping = randomUUID();
    await json(await post(taskId, { input_id: sleeping, messages: [{ content: '::sleep 60000' }] }), 201);
    await vi.waitFor(
      async () => {
        const receipt = await json<Receipt>(
          await server.request('GET', `/v2/tasks/${taskId}/inputs/${sleeping}`),
          200,
        );
        expect(receipt.status).toBe('submitted');
      },
      { timeout: 10_000, interval: 20 },
    );
    const waiting = { input_id: randomUUID(), messages: [{ content: 'never' }], model_options: options };
    await json(await post(taskId, waiting), 201);
    const stop = await json<{ cancelled_inputs: (Receipt & { model_options?: unknown })[] }>(
      await server.request('POST', `/v2/tasks/${taskId}/interrupt`, { body: {} }),
      200,
    );
    expect(stop.cancelled_inputs).toEqual([
      expect.objectContaining({ id: waiting.input_id, status: 'cancelled', model_options: options }),
    ]);
  });

  it('refuses bad input with the spec answers', async () => {
    const taskId = await idleThread();
    await json(await post(taskId, { input_id: randomUUID(), messages: [] }), 422);
    await json(await post(taskId, { input_id: 'not-a-uuid', messages: [{ content: 'x' }] }), 422);
    await json(
      await post(taskId, { input_id: randomUUID(), messages: [{ role: 'assistant', content: 'x' }] }),
      422,
    );
    for (const model_options of [
      'fast',
      [],
      null,
      { temperature: 3 },
      { temperature: '0.5' },
      { top_p: 1.5 },
      { max_output_tokens: 0 },
      { max_tokens: 1.5 },
      { max_tokens: 10, max_output_tokens: 10 },
      { reasoning_effort: 'extreme' },
    ]) {
      const refused = await json<{ detail: { loc: unknown[] }[] }>(
        await post(taskId, { input_id: randomUUID(), messages: [{ content: 'x' }], model_options }),
        422,
      );
      expect(refused.detail[0]!.loc.slice(0, 2), JSON.stringify(model_options)).toEqual([
        'body',
        'model_options',
      ]);
    }
    const missing = randomUUID();
    expect(
      await json(await post(missing, { input_id: randomUUID(), messages: [{ content: 'x' }] }), 404),
    ).toEqual({
      detail: 'Task not found',
    });
    expect(
      await json(await server.request('GET', `/v2/tasks/${taskId}/inputs/${randomUUID()}`), 404),
    ).toEqual({
      detail: 'Input not found',
    });
  });
});
