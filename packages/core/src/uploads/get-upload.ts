import type { FileTransfer } from '@paddock/protocol';
import { type FileTransferRow, findFileTransfer } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { toFileTransfer } from './transfer-view.ts';

/** What the verbs on one transfer are called with, besides the caller's context. */
export interface TransferArgs {
  taskId: string;
  transferId: string;
}

export const transferNotFound = () => new PaddockError('transfer_not_found', 'Transfer not found');

/** A transfer of a task the actor reaches; one of another task is as absent as a missing one. */
export async function reachableTransfer(
  ctx: Ctx,
  taskId: string,
  transferId: string,
): Promise<FileTransferRow> {
  await reachableThread(ctx.store.db, ctx.actor, taskId);
  const row = await findFileTransfer(ctx.store.db, transferId);
  if (row?.thread_id !== taskId) throw transferNotFound();
  return row;
}

/** `GET /v2/tasks/{id}/files/uploads/{transfer_id}`: any credential that reaches the task. */
export async function getUpload(ctx: Ctx, { taskId, transferId }: TransferArgs): Promise<FileTransfer> {
  return toFileTransfer(await reachableTransfer(ctx, taskId, transferId));
}
