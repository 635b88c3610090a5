import { join } from 'node:path';
import { newId, tokenPrefixes } from '@paddock/protocol';
import { RunnerLink } from '@paddock/sandbox';
import { createRunner } from '../sandbox-hosts/embedded.ts';
import type { Config } from '../startup/config.ts';
import { loadDeploymentConfig } from '../startup/deployment-config.ts';
import { egressSettings } from '../startup/egress-settings.ts';
import { harnessPrograms, standbyAgents } from '../startup/harness-programs.ts';
import { createLogger } from '../startup/logger.ts';
import { loadRunnerToken } from '../startup/runner-token.ts';
import { openWorkspaces } from '../startup/workspaces.ts';

/**
 * `paddock runner`: hosts sandboxes in a process of its own, connected to the server at
 * PADDOCK_SERVER_URL. Turns go on while the server restarts; the restarted server adopts them.
 * With the deployment's runner token it is one of the deployment's runners (sharing the server's
 * data dir); with an agent's token (sandbox_e) it is a self-hosted runner on a user's machine,
 * serving that agent's threads, with the workspaces in its own data dir.
 */
export async function runRunner(config: Config): Promise<void> {
  const logger = createLogger(config.PADDOCK_LOG_LEVEL);
  const server = new URL(config.PADDOCK_SERVER_URL);
  let token: string;
  try {
    token = loadRunnerToken(config.PADDOCK_RUNNER_TOKEN, config.dataDir, false);
  } catch (error) {
    process.stderr.write(`paddock runner: ${(error as Error).message}\n`);
    process.exit(2);
  }
  // The deployment's runners share the server's data dir, so its uid claims and volumes; a
  // self-hosted runner's are its own.
  const workspaces = await openWorkspaces(config);
  // The same profiles as the server's (the deployment config), for the programs its standbys start ahead.
  const deployment = loadDeploymentConfig(config.PADDOCK_CONFIG);
  const programs = harnessPrograms(config, deployment, logger);
  const { runner, isolation } = await createRunner({
    mode: config.PADDOCK_SANDBOX,
    stateDir: join(config.dataDir, 'sandboxes'),
    apiTarget: { host: server.hostname.replace(/^\[|\]$/g, ''), port: Number(server.port || 80) },
    workspaces,
    programs: programs.cache,
    logger,
    // A sandbox's model call waits out a server restart rather than failing the turn.
    apiConnectRetryMs: config.PADDOCK_ADOPTION_WINDOW_MS,
    // The deployment's domains and ranges; the registries are this machine's own.
    egress: egressSettings(deployment.network, logger),
    standby: {
      count: config.PADDOCK_STANDBY_SANDBOXES,
      size: config.PADDOCK_STANDBY_SIZE,
      agents: standbyAgents(config, programs.profiles),
    },
  });
  // A uuid: the task record's `machine_id` of the sandboxes this runner hosts.
  const runnerId = newId();
  const selfHosted = token.startsWith(tokenPrefixes.agent);
  const link = new RunnerLink({
    workspacesDir: selfHosted ? join(config.dataDir, 'workspaces') : undefined,
    skillsDir: selfHosted ? join(config.dataDir, 'skills') : undefined,
    runner,
    serverUrl: server.origin,
    token,
    runnerId,
    log: (level, message) => logger[level]({ component: 'runner' }, message),
  });
  link.start();
  logger.info(
    { runner_id: runnerId, server: server.origin, sandbox: isolation, self_hosted: selfHosted },
    'paddock runner started',
  );

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'runner shutting down; its sandboxes stop');
    link.close();
    await runner.shutdown();
    await workspaces.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}
