import {
  getTaskInput,
  interruptThread,
  listTaskEvents,
  listTaskInputs,
  PaddockError,
  type Services,
  submitTaskInput,
  taskNotFound,
} from '@paddock/core';
import {
  inputReceiptSchema,
  interruptBodySchema,
  submitTaskInputBodySchema,
  submitTaskInputResponseSchema,
  taskEventRecordSchema,
  taskEventsQuerySchema,
  taskInputParamsSchema,
  taskInputsSchema,
  taskParamsSchema,
  taskRecordSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

/** The task surface: a thread addressed by its id as a task (spec: "What the service does", 2). */
export function taskRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v2/tasks/:task_id/events',
    {
      schema: {
        params: taskParamsSchema,
        querystring: taskEventsQuerySchema,
        response: { 200: z.object({ items: z.array(taskEventRecordSchema) }) },
      },
    },
    (request) =>
      asTask(
        listTaskEvents({
          ctx: ctxOf(services, request),
          taskId: request.params.task_id,
          limit: request.query.limit,
          desc: request.query.desc,
        }),
      ),
  );

  r.post(
    '/v2/tasks/:task_id/interrupt',
    {
      config: { auth: { scope: 'publish' } },
      schema: { params: taskParamsSchema, body: interruptBodySchema, response: { 200: taskRecordSchema } },
    },
    (request) =>
      asTask(
        interruptThread({
          ctx: ctxOf(services, request),
          threadId: request.params.task_id,
          expectedGeneration: request.body?.expected_generation,
        }),
      ),
  );
  r.post(
    '/v2/tasks/:task_id/inputs',
    {
      config: { auth: { scope: 'publish' } },
      schema: {
        params: taskParamsSchema,
        body: submitTaskInputBodySchema,
        response: { 201: submitTaskInputResponseSchema },
      },
    },
    async (request, reply) => {
      const { response, replayed } = await asTask(
        submitTaskInput({
          ctx: ctxOf(services, request),
          taskId: request.params.task_id,
          input: request.body,
        }),
      );
      if (replayed) void reply.header('Idempotency-Replayed', 'true');
      return reply.code(201).send(response);
    },
  );

  r.get(
    '/v2/tasks/:task_id/inputs',
    { schema: { params: taskParamsSchema, response: { 200: taskInputsSchema } } },
    (request) => asTask(listTaskInputs({ ctx: ctxOf(services, request), taskId: request.params.task_id })),
  );

  r.get(
    '/v2/tasks/:task_id/inputs/:input_id',
    { schema: { params: taskInputParamsSchema, response: { 200: inputReceiptSchema } } },
    (request) =>
      asTask(
        getTaskInput({
          ctx: ctxOf(services, request),
          taskId: request.params.task_id,
          inputId: request.params.input_id,
        }),
      ),
  );
}

/** On the task surface a missing thread is a missing task (D3 wording). */
export async function asTask<T>(answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof PaddockError && error.code === 'thread_not_found') throw taskNotFound();
    throw error;
  }
}
