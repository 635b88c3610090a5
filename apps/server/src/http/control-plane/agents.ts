import {
  connectIntegration,
  createAgent,
  createTeam,
  disconnectIntegration,
  getAgentSecrets,
  getControlAgent,
  listConnections,
  listOrgs,
  listTeamAgents,
  listTeams,
  putAgentSecrets,
  putControlAgent,
  type Services,
} from '@paddock/core';
import {
  agentCreateBodySchema,
  agentParamsSchema,
  agentPutBodySchema,
  agentSecretsBodySchema,
  agentSecretsSchema,
  chatConnectBodySchema,
  connectionSchema,
  controlAgentSchema,
  meetingConnectBodySchema,
  orgParamsSchema,
  orgSchema,
  teamAgentSchema,
  teamAgentsQuerySchema,
  teamCreateBodySchema,
  teamParamsSchema,
  teamSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

/** The writes that change an agent: `publish`, and never from the agent's own sandbox. */
const agentWrite = { auth: { scope: 'publish' as const, refuseBound: sandboxCannotRewriteAgent } };
const items = <T extends z.ZodType>(item: T) => z.object({ items: z.array(item) });

/** Organizations and teams, control-plane agents, their secrets and their integrations (D13). */
export function agentRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.get(
    '/orgs',
    {
      schema: {
        operationId: 'listOrgs',
        summary: "List the caller's organizations, with the caller's role",
        response: { 200: items(orgSchema) },
      },
    },
    (request) => listOrgs(ctxOf(services, request)),
  );
  r.get(
    '/orgs/:org_id/teams',
    {
      schema: {
        operationId: 'listTeams',
        summary: "List an organization's teams",
        params: orgParamsSchema,
        errors: ['org_not_found'],
        response: { 200: items(teamSchema) },
      },
    },
    (request) => listTeams(ctxOf(services, request), { orgId: request.params.org_id }),
  );
  r.post(
    '/orgs/:org_id/teams',
    {
      config: { auth: { scope: 'publish', refuseBound: { as: 'forbidden', what: 'create teams' } } },
      schema: {
        operationId: 'createTeam',
        summary: 'Create a team (organization owners and admins); the caller becomes its owner',
        params: orgParamsSchema,
        body: teamCreateBodySchema,
        errors: ['org_not_found', 'forbidden'],
        response: { 201: teamSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await createTeam(ctxOf(services, request), {
          orgId: request.params.org_id,
          name: request.body.name,
        }),
      ),
  );
  r.get(
    '/orgs/:org_id/teams/:team_id/agents',
    {
      config: { auth: { refuseBound: { as: 'credential_scope_denied', what: "list a team's agents" } } },
      schema: {
        operationId: 'listTeamAgents',
        summary: 'List the agents granted to a team, newest grant first',
        params: teamParamsSchema,
        querystring: teamAgentsQuerySchema,
        errors: ['team_not_found', 'forbidden'],
        response: { 200: items(teamAgentSchema) },
      },
    },
    (request) =>
      listTeamAgents(ctxOf(services, request), {
        orgId: request.params.org_id,
        teamId: request.params.team_id,
        limit: request.query.limit,
      }),
  );

  r.post(
    '/agents',
    {
      config: { auth: { scope: 'publish', refuseBound: { as: 'forbidden', what: 'create agents' } } },
      schema: {
        operationId: 'createControlAgent',
        summary: 'Create an agent in a team',
        body: agentCreateBodySchema,
        errors: [
          'team_not_found',
          'provider_not_in_rollout',
          'conflict',
          'runtime_not_supported',
          'size_not_offered',
          'network_not_allowed',
          'provider_disabled',
          'provider_unavailable',
        ],
        response: { 201: controlAgentSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await createAgent(ctxOf(services, request), services, { body: request.body })),
  );
  r.get(
    '/agents/:agent_id',
    {
      schema: {
        operationId: 'getControlAgent',
        summary: 'Get an agent',
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: controlAgentSchema },
      },
    },
    (request) => getControlAgent(ctxOf(services, request), { agentId: request.params.agent_id }),
  );
  r.put(
    '/agents/:agent_id',
    {
      config: agentWrite,
      schema: {
        operationId: 'updateControlAgent',
        summary: "Update an agent's metadata and capability toggles (fields left out are kept)",
        params: agentParamsSchema,
        body: agentPutBodySchema,
        errors: ['agent_not_found', 'conflict', 'size_not_offered', 'network_not_allowed'],
        response: { 200: controlAgentSchema },
      },
    },
    (request) =>
      putControlAgent(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        body: request.body,
      }),
  );

  r.get(
    '/agents/:agent_id/secrets',
    {
      schema: {
        operationId: 'getAgentSecrets',
        summary: "Read an agent's secrets in plaintext",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: agentSecretsSchema },
      },
    },
    (request) => getAgentSecrets(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
  r.put(
    '/agents/:agent_id/secrets',
    {
      config: agentWrite,
      schema: {
        operationId: 'replaceAgentSecrets',
        summary: "Replace an agent's secrets (keys left out are removed)",
        params: agentParamsSchema,
        body: agentSecretsBodySchema,
        errors: ['agent_not_found', 'invalid_env_name'],
        response: { 200: agentSecretsSchema },
      },
    },
    (request) =>
      putAgentSecrets(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        secrets: request.body.secrets,
      }),
  );

  r.get(
    '/agents/:agent_id/connections',
    {
      schema: {
        operationId: 'listAgentConnections',
        summary: "Report an agent's integrations",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: items(connectionSchema) },
      },
    },
    (request) => listConnections(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
  r.put(
    '/agents/:agent_id/connections/chat',
    {
      config: agentWrite,
      schema: {
        operationId: 'connectChat',
        summary: 'Connect the chat integration, or rotate its credentials',
        params: agentParamsSchema,
        body: chatConnectBodySchema,
        errors: ['agent_not_found'],
        response: { 200: connectionSchema },
      },
    },
    (request) =>
      connectIntegration(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        kind: 'chat',
        config: request.body,
      }),
  );
  r.put(
    '/agents/:agent_id/connections/meeting',
    {
      config: agentWrite,
      schema: {
        operationId: 'connectMeeting',
        summary: 'Connect the meeting integration, or update it',
        params: agentParamsSchema,
        body: meetingConnectBodySchema,
        errors: ['agent_not_found'],
        response: { 200: connectionSchema },
      },
    },
    (request) =>
      connectIntegration(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        kind: 'meeting',
        config: request.body,
      }),
  );
  for (const kind of ['chat', 'meeting'] as const) {
    r.delete(
      `/agents/:agent_id/connections/${kind}`,
      {
        config: agentWrite,
        schema: {
          operationId: kind === 'chat' ? 'disconnectChat' : 'disconnectMeeting',
          summary: `Disconnect the ${kind} integration`,
          params: agentParamsSchema,
          errors: ['agent_not_found'],
          response: { 204: { type: 'null', description: 'Disconnected' } },
        },
      },
      async (request, reply) => {
        await disconnectIntegration(ctxOf(services, request), { agentId: request.params.agent_id, kind });
        return reply.code(204).send();
      },
    );
  }
}
