import { timestamp } from '@paddock/protocol';
import {
  activeTransferStatuses,
  closeFileTransfer,
  completeFileTransfer,
  findFileTransfer,
  findThread,
  markTransferUnstored,
} from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { fileEntry } from '../files/file-entry.ts';
import { accepted } from '../files/workspace-files.ts';
import { ensureWorkspaceDir } from '../files/workspace-target.ts';
import { transferNotFound } from './get-upload.ts';

/**
 * Once the store holds every byte: the file lands at its path in the workspace, whole (D12), written
 * by the workspace helper as the thread's sandbox user, so the agent can change it; the transfer is `completed` with its file entry,
 * and the store's copy is dropped. A landing that fails leaves the workspace as it was and the
 * transfer `failed`, with the reason.
 */
export async function completeUpload({
  services,
  transferId,
}: {
  services: Services;
  transferId: string;
}): Promise<void> {
  const { store, uploads } = services;
  const row = await findFileTransfer(store.db, transferId);
  if (!row) throw transferNotFound();
  if (!(activeTransferStatuses as readonly string[]).includes(row.status)) {
    throw new PaddockError('upload_gone', `upload is ${row.status}; it was not put in the workspace`);
  }
  let entry: string;
  try {
    const thread = await findThread(store.db, row.thread_id);
    if (!thread) throw transferNotFound();
    const workspaceDir = await ensureWorkspaceDir(services, thread);
    const { landed } = accepted(
      await services.workspaceFiles.land(workspaceDir, {
        path: row.path,
        size: row.size_bytes,
        tempTag: row.id,
        source: await uploads.store.read(row.object_key),
      }),
    );
    entry = JSON.stringify(await fileEntry(row.path, landed));
  } catch (error) {
    const failure =
      error instanceof PaddockError
        ? error
        : // The errno code only: the full error names host paths, which stay in the log.
          new PaddockError(
            'upload_failed',
            `the upload could not be put in the workspace (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
          );
    services.log.warn({ transfer_id: transferId, err: error }, 'upload did not land');
    await closeFileTransfer(store.db, transferId, {
      status: 'failed',
      at: timestamp(),
      errorCode: failure.code,
      error: failure.message,
    });
    throw failure;
  }
  await completeFileTransfer(store.db, transferId, { bytes: row.size_bytes, entry, at: timestamp() });
  // Failing here only delays the drop: the purge takes a completed transfer's bytes after the retention.
  try {
    await uploads.store.remove(row.object_key);
    await markTransferUnstored(store.db, transferId, timestamp());
  } catch (error) {
    services.log.warn(
      { transfer_id: transferId, err: error },
      'could not drop a landed upload from the store',
    );
  }
}
