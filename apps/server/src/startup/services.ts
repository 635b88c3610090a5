import { join } from 'node:path';
import {
  budgetCreditGate,
  createOutboundGuard,
  createProviderPolicy,
  createRevocations,
  createTurnExecutor,
  type Faults,
  type HarnessPrograms,
  loggedTurnTrace,
  noTurnTrace,
  type SecretBox,
  type Services,
  type TurnExecutor,
  type UploadStore,
} from '@paddock/core';
import { createEvalJudge, type ModelRouter } from '@paddock/models';
import type { EventLog, NodeSignals, TurnQueue } from '@paddock/runtime';
import type { WorkspaceIo, Workspaces } from '@paddock/sandbox';
import type { Store } from '@paddock/store';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { type DeploymentConfig, orgLimits } from './deployment-config.ts';
import type { SandboxBackends } from './sandbox-backends.ts';

/**
 * Composes every service core uses, whole and read-only: the turn executor first, on every service
 * but the steering it provides, then the services with it.
 */
export function composeServices(
  config: Config,
  parts: {
    deployment: DeploymentConfig;
    harnesses?: HarnessPrograms;
    store: Store;
    /** Made before the sandbox backends, which record their sandboxes' connections in it. */
    events: EventLog;
    secrets: SecretBox;
    nodeId: string;
    /** What this node tells the others (a revocation), and hears from them. */
    signals: NodeSignals;
    sandboxes: SandboxBackends;
    turnQueue: TurnQueue;
    workspaces: Workspaces;
    workspaceFiles: WorkspaceIo;
    uploads: UploadStore;
    models: ModelRouter;
    logger: Logger;
    faults: Faults;
  },
): { services: Services; executor: TurnExecutor } {
  const { deployment, store } = parts;
  const served = {
    store,
    events: parts.events,
    secrets: parts.secrets,
    providers: createProviderPolicy(deployment.providers, parts.sandboxes.availability),
    sandboxes: parts.sandboxes.host,
    harnesses: parts.harnesses,
    nodeId: parts.nodeId,
    revocations: createRevocations(config.PADDOCK_CREDENTIAL_RECHECK_MS, parts.signals),
    credits: budgetCreditGate({
      store,
      budgets: config.PADDOCK_CREDIT_BUDGETS,
      cacheMs: config.PADDOCK_CREDIT_CACHE_MS,
    }),
    turnQueue: parts.turnQueue,
    workspacesDir: join(config.dataDir, 'workspaces'),
    workspaces: parts.workspaces,
    workspaceFiles: parts.workspaceFiles,
    sharedFoldersDir: join(config.dataDir, 'shared'),
    skillsDir: join(config.dataDir, 'skills'),
    machines: {
      idleFreezeMs: config.PADDOCK_SANDBOX_IDLE_MS,
      idleStopMs: config.PADDOCK_SANDBOX_IDLE_STOP_MS,
      maxLifetimeMs: config.PADDOCK_SANDBOX_MAX_LIFETIME_MS,
    },
    sandboxLimits: {
      liveSandboxes: orgLimits(deployment.limits, 'live_sandboxes'),
      leaseMs: config.PADDOCK_LEASE_TTL_MS,
    },
    uploads: {
      store: parts.uploads,
      accessTtlMs: config.PADDOCK_UPLOAD_URL_TTL_MS,
      retentionMs: config.PADDOCK_UPLOAD_RETENTION_MS,
      maxBytes: config.PADDOCK_UPLOAD_MAX_BYTES,
    },
    defaultModel: parts.models.defaultModel,
    judge: createEvalJudge(parts.models, config.PADDOCK_EVAL_JUDGE_MODEL),
    outbound: createOutboundGuard({ allow: config.PADDOCK_OUTBOUND_ALLOW }),
    network: deployment.network,
    log: parts.logger,
    faults: parts.faults,
    turnTrace: config.PADDOCK_TRACE_TURNS ? loggedTurnTrace(parts.logger) : noTurnTrace,
  };
  const executor = createTurnExecutor(served);
  return { services: Object.freeze({ ...served, steering: executor }), executor };
}
