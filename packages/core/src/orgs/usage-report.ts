import { timestamp, type UsageReport } from '@paddock/protocol';
import { orgUsageReport } from '@paddock/store';
import type { Ctx } from '../context.ts';
import { orgRoleOf } from './orgs.ts';

/** The busiest threads a report lists. */
const topThreads = 20;

/**
 * `GET /orgs/{org_id}/usage` (beyond the spec): the organization's model tokens over its last
 * `days` UTC days, for any member (404 to anyone else, as the other organization routes answer).
 */
export async function orgUsage(
  ctx: Ctx,
  { orgId, days }: { orgId: string; days: number },
): Promise<UsageReport> {
  await orgRoleOf(ctx.store.db, ctx.actor.userId, orgId);
  const start = new Date(ctx.clock.now());
  start.setUTCHours(0, 0, 0, 0);
  start.setUTCDate(start.getUTCDate() - (days - 1));
  const from = timestamp(start);
  return { org_id: orgId, from, ...(await orgUsageReport(ctx.store.db, orgId, from, topThreads)) };
}
