import { z } from 'zod';
import { fileEntrySchema } from './files.ts';

/** Statuses of a file transfer (D12): `pending_upload` → `uploading` → `completed`, or one of the others. */
export const fileTransferStatuses = [
  'pending_upload',
  'uploading',
  'completed',
  'cancelled',
  'failed',
  'expired',
] as const;
export type FileTransferStatus = (typeof fileTransferStatuses)[number];

export const createUploadBodySchema = z.strictObject({
  /** Where the file lands, relative to `/workspace`. */
  path: z.string().min(1).max(4096),
  /** The exact size of the file; the upload completes when this many bytes are in. */
  size_bytes: z.number().int().min(1),
});
export type CreateUploadBody = z.infer<typeof createUploadBodySchema>;

/** Presigned access to a resumable upload: a tus 1.0 upload URL that needs no bearer token until `expires_at`. */
export const uploadAccessSchema = z.object({
  bucket: z.string(),
  object_key: z.string(),
  endpoint: z.string(),
  signature: z.string(),
  expires_at: z.string(),
});

/** A file transfer (spec: File transfer); uploads only, so `download_url` is null. */
export const fileTransferSchema = z.object({
  id: z.string(),
  task_id: z.string(),
  direction: z.literal('upload'),
  path: z.string(),
  size_bytes: z.number().int(),
  status: z.enum(fileTransferStatuses),
  bytes_transferred: z.number().int(),
  stored: z.boolean(),
  error_code: z.string().nullable(),
  error: z.string().nullable(),
  entry: fileEntrySchema.nullable(),
  upload: uploadAccessSchema.nullable(),
  download_url: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type FileTransfer = z.infer<typeof fileTransferSchema>;

export const uploadParamsSchema = z.object({ task_id: z.uuid(), transfer_id: z.uuid() });
/** The spec names the task `resource_id` on the authorize path. */
export const authorizeUploadParamsSchema = z.object({ resource_id: z.uuid(), transfer_id: z.uuid() });

/** The presigned tus endpoint's query: the signature and the expiry (epoch milliseconds) it covers. */
export const tusAccessQuerySchema = z.object({
  expires: z.string().optional(),
  signature: z.string().optional(),
});

/** Where the presigned tus upload URLs live: `<base>/v2/uploads/tus/<transfer_id>?expires=…&signature=…`. */
export const tusUploadPath = '/v2/uploads/tus';
