import {
  appendMessages,
  createThread,
  decodeThreadCursor,
  getThread,
  interruptThread,
  listThreadEvents,
  listThreadMessages,
  listThreads,
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
  threadListQuerySchema,
  threadPageSchema,
  threadParamsSchema,
  threadSchema,
  transcriptMessageSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';
import { stopErrors } from './tasks.ts';

const publish = { auth: { scope: 'publish' as const } };

/** A cursor the service did not give is a D3 422 naming it. */
const listQuery = threadListQuerySchema.superRefine((query, ctx) => {
  if (query.cursor !== undefined && !decodeThreadCursor(query.cursor))
    ctx.addIssue({ code: 'custom', path: ['cursor'], message: 'not a cursor this service gave' });
});

export function threadRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v2/threads',
    {
      config: publish,
      schema: {
        operationId: 'createThread',
        summary: 'Create a thread, and its agent unless agent_id names one',
        body: createThreadBodySchema,
        errors: [
          'agent_not_found',
          'forbidden',
          'provider_not_in_rollout',
          'runtime_not_supported',
          'size_not_offered',
          'network_not_allowed',
          'provider_disabled',
          'provider_unavailable',
          'sandbox_limit_reached',
          'unknown_skill',
        ],
        response: { 201: threadHandleSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createThread(ctxOf(services, request), services, { input: request.body })),
  );

  r.get(
    '/v2/threads',
    {
      schema: {
        operationId: 'listThreads',
        summary: "List the caller's threads, newest first (beyond the spec)",
        querystring: listQuery,
        response: { 200: threadPageSchema },
      },
    },
    (request) => listThreads(ctxOf(services, request), request.query),
  );

  r.get(
    '/v2/threads/:thread_id',
    {
      schema: {
        operationId: 'getThread',
        summary: 'Get a thread',
        params: threadParamsSchema,
        errors: ['thread_not_found'],
        response: { 200: threadSchema },
      },
    },
    (request) => getThread(ctxOf(services, request), { threadId: request.params.thread_id }),
  );

  r.get(
    '/v2/threads/:thread_id/messages',
    {
      schema: {
        operationId: 'listThreadMessages',
        summary: "List a thread's transcript",
        params: threadParamsSchema,
        errors: ['thread_not_found'],
        response: { 200: z.object({ items: z.array(transcriptMessageSchema) }) },
      },
    },
    (request) => listThreadMessages(ctxOf(services, request), { threadId: request.params.thread_id }),
  );

  r.post(
    '/v2/threads/:thread_id/messages',
    {
      config: publish,
      schema: {
        operationId: 'appendThreadMessages',
        summary: 'Append messages to a thread, and with run start a turn',
        params: threadParamsSchema,
        body: appendMessagesBodySchema,
        errors: [
          'thread_not_found',
          'task_recovery_required',
          'task_terminal_no_machine',
          'task_busy',
          'sandbox_limit_reached',
        ],
        response: { 201: appendMessagesResponseSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await appendMessages(ctxOf(services, request), services, {
          threadId: request.params.thread_id,
          input: request.body,
        }),
      ),
  );

  r.get(
    '/v2/threads/:thread_id/events',
    {
      schema: {
        operationId: 'listThreadEvents',
        summary: "List a thread's events, a page at a time",
        params: threadParamsSchema,
        querystring: threadEventsQuerySchema,
        errors: ['thread_not_found'],
        response: { 200: threadEventsPageSchema },
      },
    },
    (request) =>
      listThreadEvents(ctxOf(services, request), services, {
        threadId: request.params.thread_id,
        after: request.query.after ?? 0,
        limit: request.query.limit,
      }),
  );

  r.post(
    '/v2/threads/:thread_id/interrupt',
    {
      config: publish,
      schema: {
        operationId: 'interruptThread',
        summary: "Stop a thread's current turn and cancel its pending inputs",
        params: threadParamsSchema,
        body: interruptBodySchema,
        errors: ['thread_not_found', ...stopErrors],
        response: { 200: taskRecordSchema },
      },
    },
    (request) =>
      interruptThread(ctxOf(services, request), services, {
        threadId: request.params.thread_id,
        expectedGeneration: request.body?.expected_generation,
      }),
  );
}
