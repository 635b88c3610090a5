import { timestamp } from '@paddock/protocol';
import { findActiveTurns, findAgent, type ThreadRow } from '@paddock/store';
import { reachableThread } from '../auth/access.ts';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { awaitingAdoption } from '../threads/queue-input.ts';
import { requireInService } from '../threads/recovery.ts';
import { type BootServices, ensureThreadSandbox } from '../turns/thread-sandbox.ts';

/** A lease that expired is adopted as soon as the restarted server's runner reconnects: seconds, usually. */
const runBusyRetryAfterSeconds = 5;
/** A sandbox that died or a runner that dropped is back (or replaced) on the next boot. */
const sandboxRetryAfterSeconds = 2;

/**
 * Admits a code request on a task and makes sure its sandbox runs, booting it as a turn would (the
 * entrypoint on its first boot) but without a turn and without events. The code routes declare
 * `code:execute` besides `publish`, reads included (spec, Authentication 9); the auth hook checks
 * them before the handler.
 */
export async function readyCodeSandbox(ctx: Ctx, services: BootServices, taskId: string): Promise<ThreadRow> {
  const thread = await reachableThread(ctx.store.db, ctx.actor, taskId);
  requireInService(thread);
  // As file reads answer (spec, Files): a turn awaiting adoption may still run in a sandbox no
  // server reaches yet; booting another beside it would split the task in two.
  if (awaitingAdoption(await findActiveTurns(ctx.store.db, taskId), timestamp(new Date(ctx.clock.now())))) {
    throw new PaddockError(
      'task_run_busy',
      'the task holds a run lease that expired and awaits adoption after a server restart; retry',
      { retryAfter: runBusyRetryAfterSeconds },
    );
  }
  const agent = await findAgent(ctx.store.db, thread.agent_id);
  await inSandbox(
    ctx,
    thread.id,
    ensureThreadSandbox({ ...services, store: ctx.store, log: ctx.log }, thread, agent!),
  );
  return thread;
}

/** A sandbox that cannot boot, dies mid-run or whose runner drops is a 503 worth retrying. */
export async function inSandbox<T>(ctx: Pick<Ctx, 'log'>, threadId: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof PaddockError) throw error;
    ctx.log.warn({ err: error, thread_id: threadId }, 'code request failed in the sandbox');
    const reason = error instanceof Error ? error.message : String(error);
    throw new PaddockError('sandbox_unavailable', `the task's sandbox is unavailable: ${reason}`, {
      retryAfter: sandboxRetryAfterSeconds,
    });
  }
}
