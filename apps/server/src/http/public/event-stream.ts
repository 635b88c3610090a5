import { openEventStream, type Services } from '@paddock/core';
import { streamQuerySchema, type ThreadEvent, threadParamsSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';

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
  // Open streams end when the server closes, so shutdown does not wait on idle clients.
  const open = new Set<() => void>();
  app.addHook('preClose', async () => {
    for (const close of open) close();
  });
  app
    .withTypeProvider<ZodTypeProvider>()
    .get(
      '/v2/threads/:thread_id/events/stream',
      { schema: { params: threadParamsSchema, querystring: streamQuerySchema } },
      async (request, reply) => {
        const lastEventId = Number.parseInt(String(request.headers['last-event-id'] ?? ''), 10);
        const after = Number.isFinite(lastEventId) && lastEventId >= 0 ? lastEventId : request.query.after;
        const stream = await openEventStream({
          ctx: ctxOf(services, request),
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
        const end = () => {
          clearInterval(keepalive);
          stream.close();
        };
        open.add(stream.close);
        res.on('close', end);
        try {
          for await (const event of stream.events) {
            if (!res.write(sseFrame(event))) await new Promise((resolve) => res.once('drain', resolve));
          }
        } catch (err) {
          request.log.error({ err }, 'event stream failed');
        } finally {
          end();
          open.delete(stream.close);
          res.end();
        }
      },
    );
}
