import { findOrgIdOfAgent, type Store, sumOrgModelTokens } from '@paddock/store';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';

/**
 * Decides whether an organization (the payer of its teams' threads) may still use machines. A
 * refusal is final until the budget changes: the client must not retry.
 */
export interface CreditGate {
  admits(orgId: string): Promise<boolean>;
}

/** No budgets: every organization is admitted. */
export const unlimitedCredits: CreditGate = { admits: async () => true };

/**
 * A budget of credits per organization; organizations without one are unlimited. A credit is one
 * model token (input plus output) of a model call the organization paid for (the gateway's ledger).
 * The sum is cached per organization for `cacheMs`, so a burst of reads costs one query.
 */
export function budgetCreditGate(options: {
  store: Pick<Store, 'db'>;
  budgets: ReadonlyMap<string, number>;
  cacheMs?: number;
}): CreditGate {
  const { store, budgets, cacheMs = 5_000 } = options;
  const used = new Map<string, { total: Promise<number>; until: number }>();
  return {
    async admits(orgId) {
      const budget = budgets.get(orgId);
      if (budget === undefined) return true;
      let cached = used.get(orgId);
      if (!cached || cached.until <= Date.now()) {
        cached = { total: sumOrgModelTokens(store.db, orgId), until: Date.now() + cacheMs };
        used.set(orgId, cached);
        // A failed sum is not remembered: the next request asks again.
        const entry = cached;
        entry.total.catch(() => used.get(orgId) === entry && used.delete(orgId));
      }
      return (await cached.total) < budget;
    },
  };
}

/**
 * Refuses with 402 `credits_exhausted` when the credit gate refuses the thread's organization. The
 * detail carries only `code` and `message`: no billing figures (spec: file read errors).
 */
export async function requireCredits(
  ctx: Pick<Ctx, 'store'>,
  services: Pick<Services, 'credits'>,
  agentId: string,
): Promise<void> {
  const orgId = await findOrgIdOfAgent(ctx.store.db, agentId);
  if (orgId === undefined || (await services.credits.admits(orgId))) return;
  throw new PaddockError('credits_exhausted', "the organization's credits are exhausted");
}
