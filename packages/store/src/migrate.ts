import type { Kysely } from 'kysely';
import { type Migration, type MigrationProvider, Migrator } from 'kysely/migration';
import * as foundation from './migrations/0001-foundation.ts';
import * as stopStates from './migrations/0002-stop-states.ts';
import * as detachedRunners from './migrations/0003-detached-runners.ts';
import * as fileTransfers from './migrations/0005-file-transfers.ts';
import * as loginSessions from './migrations/0006-login-sessions.ts';
import * as machineLifetimes from './migrations/0007-machine-lifetimes.ts';
import * as controlPlaneAgents from './migrations/0010-control-plane-agents.ts';
import * as manifestsEvals from './migrations/0011-manifests-evals.ts';
import * as orchestrationsMcp from './migrations/0012-orchestrations-mcp.ts';
import {
  migration as revocationSealedMcp,
  type SealSecret,
} from './migrations/0013-revocation-sealed-mcp.ts';
import * as waitingInputs from './migrations/0014-waiting-inputs.ts';
import * as liveSandboxes from './migrations/0015-live-sandboxes.ts';
import * as inputModelOptions from './migrations/0016-input-model-options.ts';
import * as liveSandboxIds from './migrations/0017-live-sandbox-ids.ts';
import * as modelUsage from './migrations/0018-model-usage.ts';
import * as skills from './migrations/0019-skills.ts';
import * as mcpOauthFlows from './migrations/0020-mcp-oauth-flows.ts';
import * as agentNetwork from './migrations/0021-agent-network.ts';
import * as schedules from './migrations/0022-schedules.ts';
import * as threadsByTeam from './migrations/0023-threads-by-team.ts';
import * as loginFailures from './migrations/0024-login-failures.ts';
import * as machines from './migrations/0025-machines.ts';

/** Migrations are listed in code (no directory scan), so the set is the same wherever the store runs. */
const migrations = (seal: SealSecret | undefined): Record<string, Migration> => ({
  '0001-foundation': foundation,
  '0002-stop-states': stopStates,
  '0003-detached-runners': detachedRunners,
  '0005-file-transfers': fileTransfers,
  '0006-login-sessions': loginSessions,
  '0007-machine-lifetimes': machineLifetimes,
  '0010-control-plane-agents': controlPlaneAgents,
  '0011-manifests-evals': manifestsEvals,
  '0012-orchestrations-mcp': orchestrationsMcp,
  '0013-revocation-sealed-mcp': revocationSealedMcp(seal),
  '0014-waiting-inputs': waitingInputs,
  '0015-live-sandboxes': liveSandboxes,
  '0016-input-model-options': inputModelOptions,
  '0017-live-sandbox-ids': liveSandboxIds,
  '0018-model-usage': modelUsage,
  '0019-skills': skills,
  '0020-mcp-oauth-flows': mcpOauthFlows,
  '0021-agent-network': agentNetwork,
  '0022-schedules': schedules,
  '0023-threads-by-team': threadsByTeam,
  '0024-login-failures': loginFailures,
  '0025-machines': machines,
});

/** `seal` seals secrets that older versions stored in plain text (migration 0013 needs it when there are any). */
export async function migrateToLatest(db: Kysely<unknown>, seal?: SealSecret): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(seal) };
  // Migrations written side by side land in any order; each is independent of the ones it skips.
  const { error, results } = await new Migrator({
    db,
    provider,
    allowUnorderedMigrations: true,
  }).migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    const reason = error instanceof Error ? error.message : String(error ?? 'unknown error');
    // The driver's error stays the cause: its code tells an unreachable database from a bug.
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${reason}`, { cause: error });
  }
}
