import { openEventStream, type Services } from '@paddock/core';
import { streamQuerySchema, type ThreadEvent, threadParamsSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';
import { rawBody } from '../openapi.ts';

/** One SSE frame (D6): the seq is the frame id, so `Last-Event-ID` resumes exactly after it. */
export function sseFrame(event: ThreadEvent): string {
  const body = {
    type: event.type,
    thread_id: event.thread_id,
    data: event.data,
    seq: event.seq,
    id: event.id,
    ts: event.ts,
    turn_id: event.turn_id,
  };
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(body)}\n\n`;
}

export function eventStreamRoutes(
  app: FastifyInstance,
  services: Services,
  options: { keepaliveMs: number },
): void {
  // Open streams end when the server closes: `preClose` stops each one and waits until its response
  // has ended, so that Fastify finds their connections idle and closes them instead of waiting for
  // the clients to hang up.
  const open = new Map<() => void, Promise<void>>();
  app.addHook('preClose', async () => {
    for (const stop of open.keys()) stop();
    await Promise.all(open.values());
  });
  const threadEventStreamSchema = {
    operationId: 'streamThreadEvents',
    summary: "Follow a thread's events live (server-sent events, resumable with Last-Event-ID)",
    params: threadParamsSchema,
    querystring: streamQuerySchema,
    errors: ['thread_not_found'],
    response: {
      200: rawBody(
        'Server-sent events: `id: <seq>`, `event: <type>`, `data: <event JSON>`; comment keepalives between',
        'text/event-stream',
      ),
    },
  } as const;
  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      '/v2/threads/:thread_id/events/stream',
      { schema: threadEventStreamSchema },
      async (request, reply) => {
        const lastEventId = Number.parseInt(String(request.headers['last-event-id'] ?? ''), 10);
        const after = Number.isFinite(lastEventId) && lastEventId >= 0 ? lastEventId : request.query.after;
        const stream = await openEventStream(ctxOf(services, request), services, {
          threadId: request.params.thread_id,
          after,
        });
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache, no-transform',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
        });
        res.write(': connected\n\n');
        const keepalive = setInterval(() => res.write(': keepalive\n\n'), options.keepaliveMs);
        const stopping = new AbortController();
        const stop = () => {
          clearInterval(keepalive);
          stream.close();
          stopping.abort();
        };
        let ended!: () => void;
        open.set(stop, new Promise<void>((resolve) => (ended = resolve)));
        res.on('close', stop);
        try {
          for await (const event of stream.events) {
            if (!res.write(sseFrame(event))) await drainedOrStopped(res, stopping.signal);
            // Out now: Node corks a response's socket on a write and uncorks it on the next tick,
            // which waits for every queued promise reaction, and a turn's (its store calls are
            // synchronous) can hold the event there for milliseconds.
            res.socket?.uncork();
            if (event.type === 'assistant.message.chunk')
              services.turnTrace.mark(event.thread_id, 'chunk_streamed');
          }
        } catch (err) {
          request.log.error({ err }, 'event stream failed');
        } finally {
          stop();
          // A client that stopped reading would hold a graceful end forever.
          if (res.writableNeedDrain) res.destroy();
          else res.end();
          open.delete(stop);
          ended();
        }
      },
    );
}

function drainedOrStopped(res: NodeJS.WritableStream, stopping: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      stopping.removeEventListener('abort', done);
      resolve();
    };
    res.once('drain', done);
    stopping.addEventListener('abort', done, { once: true });
  });
}
