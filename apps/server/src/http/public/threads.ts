import {
  appendMessages,
  createThread,
  getThread,
  interruptThread,
  listThreadEvents,
  listThreadMessages,
  type Services,
} from '@paddock/core';
import {
  appendMessagesBodySchema,
  appendMessagesResponseSchema,
  createThreadBodySchema,
  interruptBodySchema,
  taskRecordSchema,
  threadEventsPageSchema,
  threadEventsQuerySchema,
  threadHandleSchema,
  threadParamsSchema,
  threadSchema,
  transcriptMessageSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

const publish = { auth: { scope: 'publish' as const } };

export function threadRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v2/threads',
    { config: publish, schema: { body: createThreadBodySchema, response: { 201: threadHandleSchema } } },
    async (request, reply) =>
      reply.code(201).send(await createThread({ ctx: ctxOf(services, request), input: request.body })),
  );

  r.get(
    '/v2/threads/:thread_id',
    { schema: { params: threadParamsSchema, response: { 200: threadSchema } } },
    (request) => getThread({ ctx: ctxOf(services, request), threadId: request.params.thread_id }),
  );

  r.get(
    '/v2/threads/:thread_id/messages',
    {
      schema: {
        params: threadParamsSchema,
        response: { 200: z.object({ items: z.array(transcriptMessageSchema) }) },
      },
    },
    (request) => listThreadMessages({ ctx: ctxOf(services, request), threadId: request.params.thread_id }),
  );

  r.post(
    '/v2/threads/:thread_id/messages',
    {
      config: publish,
      schema: {
        params: threadParamsSchema,
        body: appendMessagesBodySchema,
        response: { 201: appendMessagesResponseSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await appendMessages({
          ctx: ctxOf(services, request),
          threadId: request.params.thread_id,
          input: request.body,
        }),
      ),
  );

  r.get(
    '/v2/threads/:thread_id/events',
    {
      schema: {
        params: threadParamsSchema,
        querystring: threadEventsQuerySchema,
        response: { 200: threadEventsPageSchema },
      },
    },
    (request) =>
      listThreadEvents({
        ctx: ctxOf(services, request),
        threadId: request.params.thread_id,
        after: request.query.after ?? 0,
        limit: request.query.limit,
      }),
  );

  r.post(
    '/v2/threads/:thread_id/interrupt',
    {
      config: publish,
      schema: { params: threadParamsSchema, body: interruptBodySchema, response: { 200: taskRecordSchema } },
    },
    (request) =>
      interruptThread({
        ctx: ctxOf(services, request),
        threadId: request.params.thread_id,
        expectedGeneration: request.body?.expected_generation,
      }),
  );
}
