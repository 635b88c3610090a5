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
  type ErrorCode,
  eventRecordSchema,
  inputReceiptSchema,
  interruptBodySchema,
  submitTaskInputBodySchema,
  submitTaskInputResponseSchema,
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
        operationId: 'listTaskEvents',
        summary: "List a task's events",
        params: taskParamsSchema,
        querystring: taskEventsQuerySchema,
        errors: ['task_not_found'],
        response: { 200: z.object({ items: z.array(eventRecordSchema) }) },
      },
    },
    (request) =>
      asTask(
        listTaskEvents(ctxOf(services, request), services, {
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
      schema: {
        operationId: 'interruptTask',
        summary: 'Stop current work and cancel pending inputs',
        params: taskParamsSchema,
        body: interruptBodySchema,
        errors: ['task_not_found', ...stopErrors],
        response: { 200: taskRecordSchema },
      },
    },
    (request) =>
      asTask(
        interruptThread(ctxOf(services, request), services, {
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
        operationId: 'submitTaskInput',
        summary: 'Send a follow-up input (idempotent by input_id)',
        params: taskParamsSchema,
        body: submitTaskInputBodySchema,
        errors: [
          'task_not_found',
          'task_recovery_required',
          'idempotency_key_reused',
          'task_terminal_no_machine',
          'input_generation_stale',
          'invalid_input_generation',
          'task_busy',
          'sandbox_limit_reached',
        ],
        response: { 201: submitTaskInputResponseSchema },
      },
    },
    async (request, reply) => {
      const { response, replayed } = await asTask(
        submitTaskInput(ctxOf(services, request), services, {
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
    {
      schema: {
        operationId: 'listTaskInputs',
        summary: "List a task's input stream and its current generation",
        params: taskParamsSchema,
        errors: ['task_not_found'],
        response: { 200: taskInputsSchema },
      },
    },
    (request) => asTask(listTaskInputs(ctxOf(services, request), { taskId: request.params.task_id })),
  );

  r.get(
    '/v2/tasks/:task_id/inputs/:input_id',
    {
      schema: {
        operationId: 'getTaskInput',
        summary: "Get an input's receipt",
        params: taskInputParamsSchema,
        errors: ['task_not_found', 'input_not_found'],
        response: { 200: inputReceiptSchema },
      },
    },
    (request) =>
      asTask(
        getTaskInput(ctxOf(services, request), {
          taskId: request.params.task_id,
          inputId: request.params.input_id,
        }),
      ),
  );
}

/** What a Stop answers besides a missing thread or task (spec: Stop errors). */
export const stopErrors = [
  'invalid_input_generation',
  'task_recovery_required',
  'turn_interrupt_pending',
  'turn_interrupt_unsupported',
  'turn_interrupt_unconfirmed',
  'turn_interrupt_recovery_required',
] as const satisfies readonly ErrorCode[];

/** On the task surface a missing thread is a missing task (D3 wording). */
export async function asTask<T>(answer: Promise<T>): Promise<T> {
  try {
    return await answer;
  } catch (error) {
    if (error instanceof PaddockError && error.code === 'thread_not_found') throw taskNotFound();
    throw error;
  }
}
