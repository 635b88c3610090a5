import type { Insertable, Selectable } from 'kysely';
import type { FileTransfersTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type FileTransferRow = Selectable<FileTransfersTable>;

/** The statuses in which an upload still takes bytes. */
export const activeTransferStatuses = ['pending_upload', 'uploading'] as const;

/** PostgreSQL answers bigint columns as strings. */
function normalize(row: FileTransferRow): FileTransferRow {
  return { ...row, size_bytes: Number(row.size_bytes), bytes_transferred: Number(row.bytes_transferred) };
}

export async function insertFileTransfer(db: Db, row: Insertable<FileTransfersTable>): Promise<void> {
  await db.insertInto('file_transfers').values(row).execute();
}

export async function findFileTransfer(db: Db, id: string): Promise<FileTransferRow | undefined> {
  const row = await db.selectFrom('file_transfers').selectAll().where('id', '=', id).executeTakeFirst();
  return row && normalize(row);
}

/** Extends an active upload's signed access; undefined when the transfer is no longer active. */
export async function renewTransferAccess(
  db: Db,
  id: string,
  expiresAt: string,
  at: string,
): Promise<FileTransferRow | undefined> {
  const row = await db
    .updateTable('file_transfers')
    .set({ expires_at: expiresAt, updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', activeTransferStatuses)
    .returningAll()
    .executeTakeFirst();
  return row && normalize(row);
}

/** Records the bytes the upload store holds; an active upload with any is `uploading`. */
export async function recordTransferBytes(db: Db, id: string, bytes: number, at: string): Promise<void> {
  await db
    .updateTable('file_transfers')
    .set({ bytes_transferred: bytes, status: bytes > 0 ? 'uploading' : 'pending_upload', updated_at: at })
    .where('id', '=', id)
    .where('status', 'in', activeTransferStatuses)
    .execute();
}

/**
 * Marks a landed upload completed. A cancel that raced the last byte loses: the file is in the
 * workspace, so the transfer says so. False when it was closed otherwise (failed, expired).
 */
export async function completeFileTransfer(
  db: Db,
  id: string,
  done: { bytes: number; entry: string; at: string },
): Promise<boolean> {
  const result = await db
    .updateTable('file_transfers')
    .set({
      status: 'completed',
      bytes_transferred: done.bytes,
      entry: done.entry,
      error_code: null,
      error: null,
      updated_at: done.at,
      closed_at: done.at,
    })
    .where('id', '=', id)
    .where('status', 'in', [...activeTransferStatuses, 'cancelled'])
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Closes an active transfer as `cancelled` or `failed`; undefined when it was not active. */
export async function closeFileTransfer(
  db: Db,
  id: string,
  close: { status: 'cancelled' | 'failed'; at: string; errorCode?: string; error?: string },
): Promise<FileTransferRow | undefined> {
  const row = await db
    .updateTable('file_transfers')
    .set({
      status: close.status,
      error_code: close.errorCode ?? null,
      error: close.error ?? null,
      updated_at: close.at,
      closed_at: close.at,
    })
    .where('id', '=', id)
    .where('status', 'in', activeTransferStatuses)
    .returningAll()
    .executeTakeFirst();
  return row && normalize(row);
}

/**
 * Transfers whose bytes the upload store may drop: closed ones (completed, cancelled, failed) since
 * `cutoff`, and active ones whose signed access lapsed before `cutoff` (they expire).
 */
export async function listPurgeableTransfers(db: Db, cutoff: string): Promise<FileTransferRow[]> {
  const rows = await db
    .selectFrom('file_transfers')
    .selectAll()
    .where('stored', '=', 1)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', activeTransferStatuses), eb('expires_at', '<=', cutoff)]),
        eb.and([eb('status', 'not in', activeTransferStatuses), eb('closed_at', '<=', cutoff)]),
      ]),
    )
    .orderBy('created_at')
    .limit(500)
    .execute();
  return rows.map(normalize);
}

/**
 * Claims a purgeable transfer's bytes before they are removed, so an upload renewed or completed
 * meanwhile keeps them: an active one still lapsed becomes `expired`; a closed one stays as it is.
 * False when the transfer no longer qualifies.
 */
export async function claimTransferPurge(db: Db, id: string, cutoff: string, at: string): Promise<boolean> {
  const expired = await db
    .updateTable('file_transfers')
    .set({ status: 'expired', stored: 0, updated_at: at, closed_at: at })
    .where('id', '=', id)
    .where('stored', '=', 1)
    .where('status', 'in', activeTransferStatuses)
    .where('expires_at', '<=', cutoff)
    .executeTakeFirst();
  if (Number(expired.numUpdatedRows) === 1) return true;
  const closed = await db
    .updateTable('file_transfers')
    .set({ stored: 0, updated_at: at })
    .where('id', '=', id)
    .where('stored', '=', 1)
    .where('status', 'not in', activeTransferStatuses)
    .where('closed_at', '<=', cutoff)
    .executeTakeFirst();
  return Number(closed.numUpdatedRows) === 1;
}

/** Notes that the upload store no longer holds a transfer's bytes (a completed upload's, once landed). */
export async function markTransferUnstored(db: Db, id: string, at: string): Promise<void> {
  await db.updateTable('file_transfers').set({ stored: 0, updated_at: at }).where('id', '=', id).execute();
}
