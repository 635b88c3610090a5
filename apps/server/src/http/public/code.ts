import { getCodeCapabilities, runCode, type Services } from '@paddock/core';
import {
  codeCapabilitiesSchema,
  codeRunBodySchema,
  codeRunResultSchema,
  taskParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';
import { asTask } from './tasks.ts';

/** Code execution in a task's sandbox; both routes need `code:execute` besides `publish` (spec, Authentication 9). */
export function codeRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const auth = { scope: ['publish', 'code:execute'] } as const;
  const codeErrors = [
    'task_not_found',
    'task_recovery_required',
    'task_run_busy',
    'sandbox_limit_reached',
    'sandbox_unavailable',
  ] as const;

  r.post(
    '/v2/tasks/:task_id/code/run/sync',
    {
      config: { auth },
      schema: {
        operationId: 'runCode',
        summary: "Run a program in the task's sandbox and answer when it ends",
        params: taskParamsSchema,
        body: codeRunBodySchema,
        errors: codeErrors,
        response: { 200: codeRunResultSchema },
      },
    },
    (request) =>
      asTask(
        runCode(ctxOf(services, request), services, { taskId: request.params.task_id, body: request.body }),
      ),
  );

  r.get(
    '/v2/tasks/:task_id/code/capabilities',
    {
      config: { auth },
      schema: {
        operationId: 'getCodeCapabilities',
        summary: "The languages the task's sandbox runs, and the bounds of a run",
        params: taskParamsSchema,
        errors: codeErrors,
        response: { 200: codeCapabilitiesSchema },
      },
    },
    (request) =>
      asTask(getCodeCapabilities(ctxOf(services, request), services, { taskId: request.params.task_id })),
  );
}
