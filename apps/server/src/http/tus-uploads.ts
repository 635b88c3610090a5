import {
  completeUpload,
  openTusUpload,
  PaddockError,
  recordUploadProgress,
  type Services,
  type TusAccess,
} from '@paddock/core';
import { errorStatus, tusAccessQuerySchema, tusUploadPath } from '@paddock/protocol';
import { type DataStore, Server as TusServer } from '@tus/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { rawBody } from './openapi.ts';

/**
 * The presigned tus 1.0 endpoint (D12): `HEAD`, `PATCH` and `OPTIONS` on
 * `/v2/uploads/tus/<transfer_id>?expires=…&signature=…`. No bearer token: the signature in the URL is
 * checked before the request reaches the tus server, so no byte of a refused request is read.
 * Uploads are created (and cancelled) through the task API, not through tus `POST`/`DELETE`.
 */
export async function tusUploadRoutes(
  app: FastifyInstance,
  services: Services,
  datastore: DataStore,
): Promise<void> {
  recordProgressAfterWrites(datastore, (transferId) =>
    recordUploadProgress({ services, transferId }).catch((error: unknown) =>
      app.log.error({ err: error, transfer_id: transferId }, 'recording upload progress failed'),
    ),
  );
  // An empty PATCH at the full offset finishes the upload again: it waits on the landing under way.
  const landings = new Map<string, Promise<void>>();
  const completing = (transferId: string): Promise<void> => {
    let landing = landings.get(transferId);
    if (!landing) {
      landing = completeUpload({ services, transferId }).finally(() => landings.delete(transferId));
      landings.set(transferId, landing);
    }
    return landing;
  };
  const tus = new TusServer({
    path: tusUploadPath,
    datastore,
    maxSize: services.uploads.maxBytes,
    // The query carries the signature, so the id is the last segment of the path, not of the URL.
    getFileIdFromRequest: (req) => new URL(req.url).pathname.split('/').pop(),
    async onUploadFinish(_req, upload) {
      try {
        await completing(upload.id);
      } catch (error) {
        if (!(error instanceof PaddockError))
          app.log.error({ err: error, transfer_id: upload.id }, 'upload completion failed');
        throw tusError(error);
      }
      return {};
    },
  });

  const admitted = new WeakMap<FastifyRequest, TusAccess>();
  await app.register(async (scope) => {
    // The body is tus's to stream into the store; Fastify must not read it.
    scope.addContentTypeParser('application/offset+octet-stream', (_request, _payload, done) => done(null));
    for (const { method, ...doc } of tusOperations)
      scope.withTypeProvider<ZodTypeProvider>().route({
        method,
        url: `${tusUploadPath}/:transfer_id`,
        // @fastify/swagger documents an explicit HEAD route only when asked to.
        config: { auth: false, swagger: { exposeHeadRoute: method === 'HEAD' } },
        schema: {
          ...doc,
          description: tusDescription,
          params: z.object({ transfer_id: z.uuid() }),
          querystring: tusAccessQuerySchema,
        },
        // Before Fastify reads a byte of the body: a request the URL does not sign goes no further.
        async onRequest(request) {
          const query = request.query as Record<string, unknown>;
          const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
          admitted.set(
            request,
            await openTusUpload({
              services,
              transferId: (request.params as { transfer_id: string }).transfer_id,
              expires: text(query.expires),
              signature: text(query.signature),
            }),
          );
        },
        async handler(request, reply) {
          const access = admitted.get(request);
          if (!access) throw new PaddockError('internal', 'tus request was not admitted');
          if (access.kind === 'completed') {
            // A client that lost the last response learns from its HEAD that nothing is left to send.
            if (request.method !== 'HEAD') throw new PaddockError('upload_gone', 'upload is completed');
            return reply
              .code(200)
              .headers({
                'Tus-Resumable': '1.0.0',
                'Upload-Offset': String(access.size),
                'Upload-Length': String(access.size),
                'Cache-Control': 'no-store',
              })
              .send();
          }
          reply.hijack();
          // Not awaited: when the client's connection drops, sending it the response may never settle.
          void tus.handle(request.raw, reply.raw).catch((error: unknown) => {
            request.log.debug({ err: error }, 'tus request ended early');
            if (!reply.raw.headersSent) reply.raw.writeHead(500).end();
            else reply.raw.destroy();
          });
        },
      });
  });
}

const tusDescription =
  'tus 1.0 (core protocol): send `Tus-Resumable: 1.0.0`; PATCH sends `Upload-Offset` and `Content-Type: application/offset+octet-stream` with the bytes. No bearer token: the URL `createUpload` and `authorizeUpload` answer is signed (`expires`, `signature`). Refusals of the tus protocol itself have a plain-text body.';
/** Every tus request is admitted by its URL's signature first (D12). */
const tusErrors = [
  'upload_signature_required',
  'upload_signature_invalid',
  'upload_signature_expired',
  'transfer_not_found',
  'upload_gone',
] as const;
const offsetHeader = { 'Upload-Offset': { type: 'integer', description: 'The bytes the server holds' } };

/** The tus requests this endpoint takes, each one operation in the OpenAPI document. */
const tusOperations = [
  {
    method: 'HEAD',
    operationId: 'getTusUploadOffset',
    summary: 'How many bytes of the upload the server holds',
    errors: tusErrors,
    response: {
      200: {
        type: 'null',
        description: "The upload's offset and length",
        headers: { ...offsetHeader, 'Upload-Length': { type: 'integer', description: "The upload's size" } },
      },
      412: rawBody('`Tus-Resumable` is missing', 'text/plain'),
    },
  },
  {
    method: 'PATCH',
    operationId: 'appendTusUploadBytes',
    summary: "Send the upload's bytes from Upload-Offset on; the last ones put the file in the workspace",
    errors: [...tusErrors, 'invalid_path', 'not_a_file', 'upload_failed'],
    response: {
      204: { type: 'null', description: 'The bytes are stored', headers: offsetHeader },
      409: rawBody('`Upload-Offset` is not the offset the server holds', 'text/plain'),
      412: rawBody('`Tus-Resumable` is missing', 'text/plain'),
      413: rawBody("More bytes than the upload's size", 'text/plain'),
    },
  },
  {
    method: 'OPTIONS',
    operationId: 'getTusOptions',
    summary: 'The tus versions, extensions and maximum size this endpoint supports',
    errors: tusErrors,
    response: {
      204: {
        type: 'null',
        description: 'What the endpoint supports',
        headers: {
          'Tus-Version': { type: 'string' },
          'Tus-Max-Size': { type: 'integer' },
          'Tus-Extension': { type: 'string' },
        },
      },
    },
  },
] as const;

/**
 * Runs `recorded` after each write into the store ends, finished or cut off (what the store received
 * counts all the same), rather than after the tus request, whose end a dropped client can hold up.
 */
function recordProgressAfterWrites(datastore: DataStore, recorded: (id: string) => Promise<void>): void {
  const write = datastore.write.bind(datastore);
  datastore.write = async (stream, id, offset) => {
    try {
      return await write(stream, id, offset);
    } finally {
      await recorded(id);
    }
  };
}

/** A core error as tus throws it: the status, and the `{detail}` body every Paddock error has. */
function tusError(error: unknown): { status_code: number; body: string } {
  if (!(error instanceof PaddockError))
    return { status_code: 500, body: '{"detail":"Internal Server Error"}' };
  const status_code = errorStatus[error.code];
  return { status_code, body: JSON.stringify({ detail: { code: error.code, message: error.message } }) };
}
