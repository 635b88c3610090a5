import { authorizeUpload, cancelUpload, createUpload, getUpload, type Services } from '@paddock/core';
import {
  authorizeUploadParamsSchema,
  createUploadBodySchema,
  fileTransferSchema,
  taskParamsSchema,
  uploadParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';
import { asTask } from './tasks.ts';

/** Resumable uploads into a task's workspace (D12); the bytes go to the presigned tus endpoint. */
export function uploadRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/v2/tasks/:task_id/files/uploads',
    {
      config: { auth: { scope: 'publish' } },
      schema: {
        operationId: 'createUpload',
        summary: 'Start a resumable upload into the workspace; answers its signed tus URL',
        params: taskParamsSchema,
        body: createUploadBodySchema,
        errors: [
          'task_not_found',
          'files_on_remote_runner',
          'upload_too_large',
          'invalid_path',
          'path_not_found',
          'not_a_file',
        ],
        response: { 201: fileTransferSchema },
      },
    },
    async (request, reply) => {
      const transfer = await asTask(
        createUpload(ctxOf(services, request), services, {
          taskId: request.params.task_id,
          body: request.body,
          baseUrl: baseUrlOf(request),
        }),
      );
      return reply.code(201).send(transfer);
    },
  );

  r.get(
    '/v2/tasks/:task_id/files/uploads/:transfer_id',
    {
      schema: {
        operationId: 'getUpload',
        summary: 'Get an upload: its status and progress',
        params: uploadParamsSchema,
        errors: ['task_not_found', 'transfer_not_found'],
        response: { 200: fileTransferSchema },
      },
    },
    (request) =>
      asTask(
        getUpload(ctxOf(services, request), {
          taskId: request.params.task_id,
          transferId: request.params.transfer_id,
        }),
      ),
  );

  r.post(
    '/v2/tasks/:resource_id/files/uploads/:transfer_id/authorize',
    {
      config: { auth: { scope: 'publish' } },
      schema: {
        operationId: 'authorizeUpload',
        summary: "Renew an upload's signed tus URL",
        params: authorizeUploadParamsSchema,
        errors: ['task_not_found', 'transfer_not_found', 'upload_not_active'],
        response: { 200: fileTransferSchema },
      },
    },
    (request) =>
      asTask(
        authorizeUpload(ctxOf(services, request), services, {
          taskId: request.params.resource_id,
          transferId: request.params.transfer_id,
          baseUrl: baseUrlOf(request),
        }),
      ),
  );

  r.delete(
    '/v2/tasks/:task_id/files/uploads/:transfer_id',
    {
      config: { auth: { scope: 'publish' } },
      schema: {
        operationId: 'cancelUpload',
        summary: 'Cancel an upload',
        params: uploadParamsSchema,
        errors: ['task_not_found', 'transfer_not_found', 'upload_not_active'],
        response: { 200: fileTransferSchema },
      },
    },
    (request) =>
      asTask(
        cancelUpload(ctxOf(services, request), services, {
          taskId: request.params.task_id,
          transferId: request.params.transfer_id,
        }),
      ),
  );
}

/** The server as this client reached it, so the signed upload URL works from where the client is. */
function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}
