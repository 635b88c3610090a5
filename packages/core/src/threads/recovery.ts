import type { ThreadRow } from '@paddock/store';
import { PaddockError } from '../errors.ts';

/**
 * A task an operator quarantined or retired takes no Stop and no new input (spec: Stop errors). Its
 * messages stay; the client continues in `replacement_task_id` when the operator named one.
 */
export function requireInService(thread: ThreadRow): void {
  if (thread.recovery_state === null) return;
  throw new PaddockError(
    'task_recovery_required',
    `the task is ${thread.recovery_state}; its messages are kept and operator recovery is required`,
    { extra: { replacement_task_id: thread.replacement_task_id } },
  );
}
