import type { Kysely } from 'kysely';

/**
 * Resumable uploads into a thread's workspace (D12). The bytes live in the upload store under
 * `object_key` until the upload completes and lands at `path`; `stored` says whether the store still
 * holds them. `expires_at` is the expiry of the newest signed upload URL; `closed_at` when the
 * transfer left the active states (the retention of its partial bytes counts from it).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('file_transfers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('path', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('bytes_transferred', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('object_key', 'text', (c) => c.notNull())
    .addColumn('stored', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('error_code', 'text')
    .addColumn('error', 'text')
    .addColumn('entry', 'text')
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('closed_at', 'text')
    .execute();
  await db.schema
    .createIndex('file_transfers_thread_idx')
    .on('file_transfers')
    .columns(['thread_id', 'created_at'])
    .execute();
  // The purge looks for transfers whose bytes are still held.
  await db.schema
    .createIndex('file_transfers_stored_idx')
    .on('file_transfers')
    .columns(['stored', 'status'])
    .execute();
}
