import { join } from 'node:path';
import {
  bootstrap,
  budgetCreditGate,
  createAuthenticator,
  createLoginSessions,
  createOutboundGuard,
  createProviderPolicy,
  createRevocations,
  createSecretBox,
  createTurnExecutor,
  type Faults,
  queueStrandedInputs,
  revokeTokensOfDeadSandboxes,
  type SandboxHost,
  type Services,
} from '@paddock/core';
import { createEvalJudge, createModelRouter } from '@paddock/models';
import type { MachineKind } from '@paddock/protocol';
import { createEventLog, createInProcessEventBus, createTurnWorker } from '@paddock/runtime';
import { createWorkspaceIo, type HeldTurn, RunnerHub } from '@paddock/sandbox';
import { findThread, findTurn, openStore, type Store } from '@paddock/store';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../http/app.ts';
import { startDockerSandboxes } from '../sandbox-hosts/docker.ts';
import { createRunner, embeddedSandboxHost } from '../sandbox-hosts/embedded.ts';
import { startLiveSandboxRenewal } from '../sandbox-hosts/live-sandbox-renewal.ts';
import { microVmSandboxHost } from '../sandbox-hosts/micro-vm.ts';
import { startMicroVmCheck } from '../sandbox-hosts/micro-vm-check.ts';
import { providerAvailability } from '../sandbox-hosts/provider-availability.ts';
import { routedSandboxHost } from '../sandbox-hosts/routed.ts';
import { startUploadPurge } from '../uploads/upload-purge.ts';
import { createUploadBackend } from '../uploads/upload-store.ts';
import { announceBootstrap, keepBootstrap } from './bootstrap-files.ts';
import type { Config } from './config.ts';
import { loadDeploymentConfig, orgLimits } from './deployment-config.ts';
import { createLogger } from './logger.ts';
import { loadNodeId } from './node-id.ts';
import { loadRunnerToken } from './runner-token.ts';
import { loadSecretKey } from './secret-key.ts';
import { databaseFailure, listenFailure, prepareDataDir } from './startup-errors.ts';
import { openWorkspaces } from './workspaces.ts';

/**
 * The `iss` of the built-in identity provider's sessions: the same on every node of a deployment
 * (they share its keys through the database), whatever URL each listens on.
 */
const builtinIssuer = 'paddock';

export interface Paddock {
  app: FastifyInstance;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  services: Services;
  logger: Logger;
  close(): Promise<void>;
}

/** Builds every adapter once from the parsed config, starts the server and the turn worker. */
export async function startPaddock(
  config: Config,
  options: { logger?: Logger; faults?: Faults } = {},
): Promise<Paddock> {
  const logger = options.logger ?? createLogger(config.PADDOCK_LOG_LEVEL);
  const deployment = loadDeploymentConfig(config.PADDOCK_CONFIG);
  // A provider the deployment config leaves off says why it cannot run at debug only.
  const enabled = (...kinds: MachineKind[]) => kinds.some((kind) => deployment.providers[kind]?.enabled);
  // sandbox_f: a real guest run, in the background from here on (see micro-vm-check.ts).
  const microVmCheck = startMicroVmCheck(config.PADDOCK_MICROVM_ACCEL, logger, enabled('sandbox_f'));
  prepareDataDir(config.dataDir);
  const secrets = createSecretBox(loadSecretKey(config.PADDOCK_SECRET_KEY, config.dataDir));
  const store = await openStore({
    databaseUrl: config.DATABASE_URL,
    dataDir: config.dataDir,
    sealSecret: (plaintext) => secrets.seal(plaintext),
  }).catch((error: unknown) => {
    throw databaseFailure(error, config);
  });
  const boot = await bootstrap(store, {
    bootstrapToken: config.PADDOCK_BOOTSTRAP_TOKEN,
    adminPassword: config.PADDOCK_ADMIN_PASSWORD,
    keep: (created) => keepBootstrap(config.dataDir, created),
  });
  if (boot.created) announceBootstrap(config.dataDir, boot.created, logger);

  const models = createModelRouter({
    openai: config.OPENAI_API_KEY
      ? { apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL }
      : undefined,
    anthropic: config.ANTHROPIC_API_KEY ? { apiKey: config.ANTHROPIC_API_KEY } : undefined,
    defaultModel: config.PADDOCK_DEFAULT_MODEL,
  });
  const events = createEventLog(store, createInProcessEventBus());
  const starting = { available: false, reason: 'the server is starting' };
  const detachedOnly = {
    available: false,
    reason: 'micro-VMs run with the in-process runner only (PADDOCK_RUNNER=embedded)',
  };
  const microVmAvailability = () =>
    config.PADDOCK_RUNNER === 'detached' ? detachedOnly : microVmCheck.availability();
  let availability = () => providerAvailability('starting', true, starting, microVmAvailability());
  const uploadBackend = createUploadBackend(config);
  const workspaces = await openWorkspaces(config);
  const workspaceFiles = createWorkspaceIo();
  const services: Services = {
    store,
    events,
    secrets,
    providers: createProviderPolicy(deployment.providers, () => availability()),
    sandboxes: undefined as unknown as Services['sandboxes'],
    nodeId: loadNodeId(config.dataDir),
    revocations: createRevocations(config.PADDOCK_CREDENTIAL_RECHECK_MS),
    credits: budgetCreditGate({
      store,
      budgets: config.PADDOCK_CREDIT_BUDGETS,
      cacheMs: config.PADDOCK_CREDIT_CACHE_MS,
    }),
    workspacesDir: join(config.dataDir, 'workspaces'),
    workspaces,
    workspaceFiles,
    sharedFoldersDir: join(config.dataDir, 'shared'),
    machines: {
      idleFreezeMs: config.PADDOCK_SANDBOX_IDLE_MS,
      idleStopMs: config.PADDOCK_SANDBOX_IDLE_STOP_MS,
      maxLifetimeMs: config.PADDOCK_SANDBOX_MAX_LIFETIME_MS,
    },
    sandboxLimits: {
      liveSandboxes: (orgId) => orgLimits(deployment.limits, 'live_sandboxes')?.(orgId),
      leaseMs: config.PADDOCK_LEASE_TTL_MS,
    },
    uploads: {
      store: uploadBackend.store,
      accessTtlMs: config.PADDOCK_UPLOAD_URL_TTL_MS,
      retentionMs: config.PADDOCK_UPLOAD_RETENTION_MS,
      maxBytes: config.PADDOCK_UPLOAD_MAX_BYTES,
    },
    defaultModel: models.defaultModel,
    judge: createEvalJudge(models, config.PADDOCK_EVAL_JUDGE_MODEL),
    outbound: createOutboundGuard({ allow: config.PADDOCK_OUTBOUND_ALLOW }),
    log: logger,
    faults: options.faults,
  };
  // What the runners' hubs do with the turns a reconnecting runner holds: ask the turn worker, built
  // below before the server listens, and so before any runner can connect.
  const heldTurns = {
    adopt: async (turn: HeldTurn) =>
      (await turnOfAgent(store, turn.turnId, turn.agentId)) &&
      worker.adopt(turn.turnId, turn.runnerId, executor.resume),
    reconcile: (runnerId: string, held: ReadonlySet<string>) =>
      worker.reconcile(runnerId, held, (turn) => executor.settleLost(turn, runnerId)),
  };
  // Detached runners host the sandboxes in their own processes, so turns outlive a server restart.
  const hub =
    config.PADDOCK_RUNNER === 'detached'
      ? new RunnerHub({ logger, timings: { lostAfterMs: config.PADDOCK_ADOPTION_WINDOW_MS }, ...heldTurns })
      : undefined;
  // Self-hosted runners (sandbox_e): started by users on their own machines, each for one agent.
  const selfHosted = new RunnerHub({
    logger,
    timings: {
      lostAfterMs: config.PADDOCK_ADOPTION_WINDOW_MS,
      waitForRunnerMs: config.PADDOCK_SELF_HOSTED_WAIT_MS,
    },
    ...heldTurns,
    selfHosted: true,
  });
  // Before anything is served: the sandboxes this node hosted died with its previous process.
  const dead = await revokeTokensOfDeadSandboxes(services);
  if (dead > 0) logger.info({ count: dead }, 'revoked the thread tokens of sandboxes gone with the last run');
  const sessions = createLoginSessions({
    store,
    secrets,
    issuer: builtinIssuer,
    ttlMs: config.PADDOCK_SESSION_TTL_MS,
    external: config.PADDOCK_OIDC_ISSUER
      ? { issuer: config.PADDOCK_OIDC_ISSUER, audience: config.PADDOCK_OIDC_AUDIENCE! }
      : undefined,
  });
  // The server's own address, for the sandboxes' API proxy: known once it listens (PORT 0 picks
  // one), read by each connection the proxy forwards and each boot. Everything else is built first.
  let port = config.PORT;
  const hostPart = config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST;
  const apiTarget = {
    host: config.HOST,
    get port() {
      return port;
    },
  };
  const apiUrl = () => `http://${hostPart}:${port}`;

  let sandboxes: { host: SandboxHost; isolation: string; sharedFolders: boolean; shutdown(): Promise<void> };
  let microVms: ReturnType<typeof microVmSandboxHost> | undefined;
  if (hub) {
    // A detached runner on this host, as root, mounts shared folders like the in-process one.
    sandboxes = {
      host: hub,
      isolation: 'detached runners',
      sharedFolders: true,
      shutdown: async () => hub.close(),
    };
  } else {
    const { runner, isolation } = await createRunner({
      mode: config.PADDOCK_SANDBOX,
      stateDir: join(config.dataDir, 'sandboxes'),
      apiTarget,
      workspaces,
      logger,
      enabled: enabled('sandbox_a', 'sandbox_c', 'sandbox_d'),
      standbys: config.PADDOCK_STANDBY_SANDBOXES,
    });
    sandboxes = {
      host: embeddedSandboxHost(runner, apiUrl),
      isolation,
      sharedFolders: runner.provider.sharedFolders,
      shutdown: () => runner.shutdown(),
    };
    microVms = microVmSandboxHost({
      check: microVmCheck,
      stateDir: join(config.dataDir, 'microvms'),
      apiTarget,
      apiUrl,
      workspaces,
      logger,
    });
  }
  // sandbox_b: containers on the Docker engine at DOCKER_HOST, hosted by this process in every mode.
  const docker = startDockerSandboxes({
    dockerHost: config.DOCKER_HOST,
    image: config.PADDOCK_DOCKER_IMAGE,
    stateDir: join(config.dataDir, 'sandboxes-docker'),
    apiTarget,
    apiUrl,
    workspaces,
    logger,
    enabled: enabled('sandbox_b'),
  });
  services.sandboxes = routedSandboxHost(sandboxes.host, {
    sandbox_e: selfHosted,
    sandbox_b: docker.host,
    ...(microVms && { sandbox_f: microVms.host }),
  });
  availability = () =>
    providerAvailability(
      sandboxes.isolation,
      sandboxes.sharedFolders,
      docker.availability(),
      microVmAvailability(),
    );
  const executor = createTurnExecutor(services);
  const worker = createTurnWorker({
    store,
    execute: executor.execute,
    settleExpired: executor.settleExpired,
    leaseTtlMs: config.PADDOCK_LEASE_TTL_MS,
    adoptionWindowMs: config.PADDOCK_ADOPTION_WINDOW_MS,
    concurrency: config.PADDOCK_MAX_CONCURRENT_TURNS,
    runningTurnLimit: orgLimits(deployment.limits, 'running_turns'),
    repair: () => queueStrandedInputs(services),
    pollMs: config.PADDOCK_SWEEP_MS,
    log: logger,
  });
  services.worker = worker;
  services.steering = executor;
  const app = await buildApp({
    services,
    authenticator: createAuthenticator(store, { sessions }),
    sessions,
    enforceGuardedWrites: config.PADDOCK_ENFORCE_WRITE_SCOPES,
    models,
    logger,
    bodyLimit: config.PADDOCK_BODY_LIMIT_BYTES,
    trustProxy: config.PADDOCK_TRUST_PROXY,
    keepaliveMs: config.PADDOCK_SSE_KEEPALIVE_MS,
    uploadDatastore: uploadBackend.datastore,
    runnerLink: {
      deployment: hub && { hub, token: loadRunnerToken(config.PADDOCK_RUNNER_TOKEN, config.dataDir, true) },
      selfHosted,
    },
  });
  // What is built before the server listens, closed in the order `close` gives below.
  const closeBuilt = async () => {
    workspaceFiles.close();
    selfHosted.close();
    await sandboxes.shutdown();
    await docker.shutdown();
    await microVms?.shutdown();
    await microVmCheck.settled;
    await app.close();
    await services.outbound.close();
    await workspaces.close();
    await store.close();
  };
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (error) {
    await closeBuilt().catch((closing: unknown) =>
      logger.error({ err: closing }, 'closing after a failed start'),
    );
    throw listenFailure(error, config);
  }
  const address = app.server.address();
  if (typeof address === 'object' && address) port = address.port;
  const url = apiUrl();
  await docker.probed;
  worker.start();
  const uploadPurge = startUploadPurge(services, logger);
  const liveSandboxes = startLiveSandboxRenewal(services, logger);
  logger.info({ url, database: store.dialect, sandbox: sandboxes.isolation }, 'paddock is listening');

  return {
    app,
    url,
    services,
    logger,
    async close() {
      // Turns first (they settle in the store, or, on detached runners, go on for the next server to
      // adopt), then the sandboxes (their connections to the gateway go with them), then the HTTP
      // server, whose close waits on open connections.
      await worker.stop();
      await uploadPurge.stop();
      await liveSandboxes.stop();
      await closeBuilt();
    },
  };
}

/**
 * Whether a turn a runner offers for adoption is one it may hold: any, for the deployment's runners;
 * only its agent's, for a self-hosted one.
 */
async function turnOfAgent(store: Store, turnId: string, agentId: string | undefined): Promise<boolean> {
  if (agentId === undefined) return true;
  const turn = await findTurn(store.db, turnId);
  const thread = turn && (await findThread(store.db, turn.thread_id));
  return thread?.agent_id === agentId;
}
