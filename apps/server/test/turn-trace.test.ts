import { randomUUID } from 'node:crypto';
import { traceStages } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, json, settled } from './helpers.ts';

/**
 * `PADDOCK_TRACE_TURNS` (docs/performance.md): a follow-up's timeline, from its stored input to its
 * first chunk on a client's stream, every stage marked in order, logged once.
 */
describe.each(testDatabases())('the turn trace ($name)', (database) => {
  let server: TestServer;
  const logged: Record<string, unknown>[] = [];
  beforeAll(async () => {
    const logger = pino({ level: 'info' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    server = await startTestServer(database, { PADDOCK_TRACE_TURNS: 'true' }, { logger });
  });
  afterAll(() => server?.close());

  it('logs a follow-up’s stages from its input to its first streamed chunk, in order', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: 'first' } }),
      201,
    );
    await settled(server, thread_id);
    const stream = await server.request('GET', `/v2/threads/${thread_id}/events/stream`);
    const reading = (async () => {
      let text = '';
      for await (const chunk of stream.body!) {
        text += Buffer.from(chunk).toString();
        if (text.includes('event: assistant.message.chunk')) break;
      }
    })();
    const input = await server.request('POST', `/v2/tasks/${thread_id}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: 'a follow-up' }] },
    });
    expect(input.status).toBe(201);
    await reading;
    const timeline = await vi.waitFor(() => {
      const line = logged.find((l) => l.msg === 'turn timeline' && l.thread_id === thread_id);
      if (!line) throw new Error('no timeline logged');
      return line.ms as Record<string, number>;
    });
    expect(Object.keys(timeline)).toEqual([...traceStages]);
    const offsets = traceStages.map((stage) => timeline[stage]!);
    expect(offsets[0]).toBe(0);
    expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    await settled(server, thread_id);
    expect(logged.filter((l) => l.msg === 'turn timeline' && l.thread_id === thread_id)).toHaveLength(1);
  });
});
