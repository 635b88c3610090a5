import {
  bootstrap,
  createSecretBox,
  type Faults,
  networkRecorder,
  noFaults,
  revokeTokensOfDeadSandboxes,
  type Services,
} from '@paddock/core';
import { createModelRouter } from '@paddock/models';
import { createEventLog, createTurnQueue } from '@paddock/runtime';
import { createWorkspaceIo } from '@paddock/sandbox';
import { openStore } from '@paddock/store';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { startMicroVmCheck } from '../sandbox-hosts/micro-vm-check.ts';
import { createUploadBackend } from '../uploads/upload-store.ts';
import { paddockApp } from './app.ts';
import { backgroundJobs } from './background-jobs.ts';
import { announceBootstrap, keepBootstrap } from './bootstrap-files.ts';
import type { Config } from './config.ts';
import { loadDeploymentConfig } from './deployment-config.ts';
import { egressSettings } from './egress-settings.ts';
import { harnessPrograms, standbyAgents } from './harness-programs.ts';
import { createLogger } from './logger.ts';
import { machinePresence } from './machine-presence.ts';
import { loadNodeId } from './node-id.ts';
import { createNodeLinks } from './node-links.ts';
import { startSandboxBackends } from './sandbox-backends.ts';
import { loadSecretKey } from './secret-key.ts';
import { serverAddress } from './server-address.ts';
import { composeServices } from './services.ts';
import { databaseFailure, listenFailure, prepareDataDir } from './startup-errors.ts';
import { threadModels } from './thread-models.ts';
import { openWorkspaces } from './workspaces.ts';

export interface Paddock {
  app: FastifyInstance;
  /** Base URL the server listens on, e.g. `http://127.0.0.1:8787`. */
  url: string;
  services: Services;
  logger: Logger;
  close(): Promise<void>;
}

/**
 * Builds every adapter once from the parsed config, all of it before the server listens: the sandbox
 * backends, the services (the turn executor among them), the turn worker, the app. Once it listens,
 * the worker and the timers start.
 */
export async function startPaddock(
  config: Config,
  options: { logger?: Logger; faults?: Faults } = {},
): Promise<Paddock> {
  const logger = options.logger ?? createLogger(config.PADDOCK_LOG_LEVEL);
  const deployment = loadDeploymentConfig(config.PADDOCK_CONFIG);
  // sandbox_f: a real guest run, in the background from here on (see micro-vm-check.ts).
  const microVmCheck = startMicroVmCheck(
    config.PADDOCK_MICROVM_ACCEL,
    logger,
    deployment.providers.sandbox_f?.enabled === true,
  );
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

  const nodeId = loadNodeId(config.dataDir);
  // Before anything is served: the sandboxes this node hosted died with its previous process.
  const dead = await revokeTokensOfDeadSandboxes({ store, nodeId });
  if (dead > 0) logger.info({ count: dead }, 'revoked the thread tokens of sandboxes gone with the last run');
  const models = createModelRouter({
    openai: config.OPENAI_API_KEY
      ? { apiKey: config.OPENAI_API_KEY, baseURL: config.OPENAI_BASE_URL }
      : undefined,
    anthropic: config.ANTHROPIC_API_KEY ? { apiKey: config.ANTHROPIC_API_KEY } : undefined,
    defaultModel: config.PADDOCK_DEFAULT_MODEL,
  });
  const address = serverAddress(config.HOST, config.PORT);
  const uploadBackend = createUploadBackend(config);
  const workspaces = await openWorkspaces(config);
  const workspaceFiles = createWorkspaceIo();
  // What the verbs, the executor and the runners' hubs ask of the turn worker, made below.
  const links = createNodeLinks(store, config.DATABASE_URL, logger);
  const turnQueue = createTurnQueue(links.signals);
  const events = createEventLog(store, links.bus);
  const harnesses = harnessPrograms(config, deployment, logger);
  const presence = machinePresence();
  // The runners' loops call the router in process once the services (made after them) exist.
  let composed: Services | undefined;
  const sandboxes = await startSandboxBackends(config, {
    models: threadModels(models, () => {
      if (!composed) throw new Error('a turn ran before the services were made');
      return composed;
    }),
    runnersChanged: presence.changed,
    deployment,
    programs: harnesses.cache,
    standbyAgents: standbyAgents(config, harnesses.profiles),
    logger,
    store,
    workspaces,
    address,
    turnQueue,
    microVmCheck,
    egress: egressSettings(deployment.network, logger),
    recordNetwork: networkRecorder(events, logger),
  });
  const { services, executor } = composeServices(config, {
    deployment,
    harnesses,
    store,
    events,
    secrets,
    nodeId,
    signals: links.signals,
    sandboxes,
    turnQueue,
    workspaces,
    workspaceFiles,
    uploads: uploadBackend.store,
    models,
    logger,
    faults: options.faults ?? noFaults,
  });
  composed = services;
  const jobs = backgroundJobs(config, {
    deployment,
    services,
    executor,
    turnQueue,
    logger,
    nodeUrl: () => config.PADDOCK_NODE_URL ?? address.url(),
    presence,
  });
  const app = await paddockApp(config, {
    services,
    secrets,
    sandboxes,
    models,
    uploadDatastore: uploadBackend.datastore,
    logger,
  });
  // What is built before the server listens, closed in the order `close` gives below.
  const closeBuilt = async () => {
    workspaceFiles.close();
    await sandboxes.shutdown();
    await app.close();
    await services.outbound.close();
    await workspaces.close();
    await links.close();
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
  address.listening(app.server);
  jobs.start();
  const url = address.url();
  logger.info(
    { url, database: store.dialect, sandbox: sandboxes.availability().sandbox_a.isolation },
    'paddock is listening',
  );

  return {
    app,
    url,
    services,
    logger,
    async close() {
      // Turns first (they settle in the store, or, on detached runners, go on for the next server to
      // adopt), then the sandboxes (their connections to the gateway go with them), then the HTTP
      // server, whose close waits on open connections.
      await jobs.stop();
      await closeBuilt();
    },
  };
}
