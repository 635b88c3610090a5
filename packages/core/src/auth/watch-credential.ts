import type { Ctx, Services } from '../context.ts';
import { isCredentialLive } from './credential-liveness.ts';

/**
 * Calls `onRevoked` once the caller's credential stops counting: at once for a revocation made in
 * this process, within `revocations.recheckMs` for one made on another node (or a session that
 * lapses). Answers a function that stops watching.
 */
export function watchCredential(
  ctx: Pick<Ctx, 'actor' | 'store' | 'log'>,
  services: Pick<Services, 'revocations'>,
  onRevoked: () => void,
) {
  let stopped = false;
  let checking: Promise<void> | undefined;
  let again = false;
  const check = async (): Promise<void> => {
    try {
      if (!stopped && !(await isCredentialLive(ctx.store.db, ctx.actor.credential))) {
        stop();
        onRevoked();
      }
    } catch (err) {
      // The database is unreachable: the next check decides.
      ctx.log.warn({ err, credential: ctx.actor.credential.id }, 'credential re-check failed');
    }
  };
  // A signal that arrives during a check may concern a revocation the check read too early.
  const schedule = () => {
    if (checking) {
      again = true;
      return;
    }
    checking = check().finally(() => {
      checking = undefined;
      if (again && !stopped) {
        again = false;
        schedule();
      }
    });
  };
  const timer = setInterval(schedule, services.revocations.recheckMs);
  timer.unref();
  const unsubscribe = services.revocations.onRevoked(schedule);
  function stop() {
    stopped = true;
    clearInterval(timer);
    unsubscribe();
  }
  return stop;
}
