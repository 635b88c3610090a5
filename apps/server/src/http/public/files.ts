import { fileContent, fileTree, listFiles, type Services } from '@paddock/core';
import {
  fileListSchema,
  filesQuerySchema,
  fileTreeNodeSchema,
  fileTreeQuerySchema,
  taskParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';
import { rawBody } from '../openapi.ts';
import { asTask } from './tasks.ts';

/** What a file read answers besides its request's own errors (spec: file read admission errors). */
const fileReadErrors = [
  'task_not_found',
  'task_terminal_no_machine',
  'files_on_remote_runner',
  'credits_exhausted',
  'task_run_busy',
  'machine_not_ready',
  'sandbox_limit_reached',
  'invalid_path',
  'path_not_found',
  'not_a_file',
] as const;

/** Reads of a task's workspace (spec: "Files (public)", D12): no scope beyond reaching the task. */
export function fileRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/v2/tasks/:task_id/files',
    {
      schema: {
        operationId: 'listFiles',
        summary: 'List a directory of the workspace',
        params: taskParamsSchema,
        querystring: filesQuerySchema,
        errors: fileReadErrors,
        response: { 200: fileListSchema },
      },
    },
    (request) =>
      asTask(
        listFiles(ctxOf(services, request), services, {
          taskId: request.params.task_id,
          path: request.query.path,
        }),
      ),
  );

  r.get(
    '/v2/tasks/:task_id/files/tree',
    {
      schema: {
        operationId: 'getFileTree',
        summary: 'The workspace as a tree, bounded in depth and entries',
        params: taskParamsSchema,
        querystring: fileTreeQuerySchema,
        errors: fileReadErrors,
        response: { 200: fileTreeNodeSchema },
      },
    },
    (request) =>
      asTask(
        fileTree(ctxOf(services, request), services, {
          taskId: request.params.task_id,
          path: request.query.path,
          maxDepth: request.query.max_depth,
          maxEntries: request.query.max_entries,
        }),
      ),
  );

  r.get(
    '/v2/tasks/:task_id/files/content',
    {
      schema: {
        operationId: 'getFileContent',
        summary: "Download a file's bytes",
        params: taskParamsSchema,
        querystring: filesQuerySchema,
        errors: fileReadErrors,
        response: { 200: rawBody('The file, as an attachment', 'application/octet-stream') },
      },
    },
    async (request, reply) => {
      const file = await asTask(
        fileContent(ctxOf(services, request), services, {
          taskId: request.params.task_id,
          path: request.query.path,
        }),
      );
      // A download, never a page rendered on the API's origin, whatever the workspace holds.
      return reply
        .type(file.contentType)
        .header('content-length', file.size)
        .header('x-content-type-options', 'nosniff')
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(file.name)}`)
        .send(file.body);
    },
  );
}
