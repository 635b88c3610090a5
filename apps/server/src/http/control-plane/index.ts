import type { Services } from '@paddock/core';
import type { FastifyInstance } from 'fastify';
import { agentRoutes } from './agents.ts';
import { evalRoutes } from './evals.ts';
import { manifestRoutes } from './manifests.ts';
import { mcpServerRoutes } from './mcp-servers.ts';
import { orchestrationRoutes } from './orchestrations.ts';
import { scheduleRoutes } from './schedules.ts';
import { credentialRoutes } from './tokens.ts';
import { usageRoutes } from './usage.ts';

/** The control plane's prefixes (spec rules 9 and 10): one router, the same handlers and checks. */
export const controlPlanePrefixes = ['/v2/cli', '/api/cli'] as const;

/**
 * The control plane the command-line client uses. Every route declares its scope (`publish` on the
 * writes, none on reads) and, where a resource-bound credential is refused, `refuseBound`.
 */
export async function controlPlaneRoutes(app: FastifyInstance, services: Services): Promise<void> {
  for (const prefix of controlPlanePrefixes) {
    await app.register(
      async (cli) => {
        credentialRoutes(cli, services);
        agentRoutes(cli, services);
        manifestRoutes(cli, services);
        evalRoutes(cli, services);
        orchestrationRoutes(cli, services);
        mcpServerRoutes(cli, services);
        scheduleRoutes(cli, services);
        usageRoutes(cli, services);
      },
      { prefix },
    );
  }
}
