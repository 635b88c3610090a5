import { getAgent, type Services, setAgentSecret, updateAgent } from '@paddock/core';
import {
  agentParamsSchema,
  agentPatchSchema,
  agentRecordSchema,
  agentSecretBodySchema,
  agentSecretParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { sandboxCannotRewriteAgent } from '../auth.ts';
import { ctxOf } from '../context.ts';

export function agentRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/agents/:agent_id',
    {
      schema: {
        operationId: 'getAgent',
        summary: "Read an agent's spec",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) => getAgent(ctxOf(services, request), services, { agentId: request.params.agent_id }),
  );
  r.patch(
    '/v2/agents/:agent_id',
    {
      // Spec Authentication 11: an agent's secrets always need `publish`; the rest of the patch is a
      // guarded write, enforced only when the deployment turns the guard on.
      config: {
        auth: {
          guarded: { scope: 'publish', unlessBody: ['secrets'] },
          refuseBound: sandboxCannotRewriteAgent,
        },
      },
      schema: {
        operationId: 'updateAgent',
        summary: "Update an agent's spec (fields left out are kept)",
        params: agentParamsSchema,
        body: agentPatchSchema,
        errors: ['agent_not_found', 'conflict', 'size_not_offered', 'network_not_allowed', 'unknown_skill'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) =>
      updateAgent(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        patch: request.body,
      }),
  );
  // One secret at a time (beyond the spec): the others are kept, and no answer holds a value.
  const secretWrite = { auth: { scope: 'publish' as const, refuseBound: sandboxCannotRewriteAgent } };
  r.put(
    '/v2/agents/:agent_id/secrets/:secret_name',
    {
      config: secretWrite,
      schema: {
        operationId: 'setAgentSecret',
        summary: "Set one of an agent's secrets (the others are kept)",
        params: agentSecretParamsSchema,
        body: agentSecretBodySchema,
        errors: ['agent_not_found', 'conflict'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) =>
      setAgentSecret(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        name: request.params.secret_name,
        value: request.body.value,
      }),
  );
  r.delete(
    '/v2/agents/:agent_id/secrets/:secret_name',
    {
      config: secretWrite,
      schema: {
        operationId: 'deleteAgentSecret',
        summary: "Remove one of an agent's secrets",
        params: agentSecretParamsSchema,
        errors: ['agent_not_found', 'conflict'],
        response: { 200: agentRecordSchema },
      },
    },
    (request) =>
      setAgentSecret(ctxOf(services, request), services, {
        agentId: request.params.agent_id,
        name: request.params.secret_name,
        value: null,
      }),
  );
}
