import {
  listAgentKeys,
  listPersonalTokens,
  mintAgentKey,
  mintPersonalToken,
  renamePersonalToken,
  revokeAgentKey,
  revokePersonalToken,
  type Services,
} from '@paddock/core';
import {
  agentKeyCreatedSchema,
  agentKeyMintBodySchema,
  agentKeySchema,
  agentParamsSchema,
  keyIdParamsSchema,
  personalTokenCreatedSchema,
  personalTokenMintBodySchema,
  personalTokenRenameBodySchema,
  personalTokenSchema,
  tokenIdParamsSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ctxOf } from '../context.ts';

const session = { auth: { session: true as const } };
const publish = { auth: { scope: 'publish' as const } };

/** Personal access tokens (login session only) and agent keys. */
export function credentialRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();

  r.post(
    '/tokens',
    {
      config: session,
      schema: {
        operationId: 'createPersonalToken',
        summary: 'Mint a personal access token (the token is answered once)',
        body: personalTokenMintBodySchema,
        response: { 201: personalTokenCreatedSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(await mintPersonalToken(ctxOf(services, request), request.body)),
  );
  r.get(
    '/tokens',
    {
      config: session,
      schema: {
        operationId: 'listPersonalTokens',
        summary: "List the caller's live personal access tokens",
        response: { 200: z.object({ items: z.array(personalTokenSchema) }) },
      },
    },
    (request) => listPersonalTokens(ctxOf(services, request)),
  );
  r.patch(
    '/tokens/:token_id',
    {
      config: session,
      schema: {
        operationId: 'renamePersonalToken',
        summary: 'Rename a personal access token',
        params: tokenIdParamsSchema,
        body: personalTokenRenameBodySchema,
        errors: ['token_not_found'],
        response: { 200: personalTokenSchema },
      },
    },
    (request) =>
      renamePersonalToken(ctxOf(services, request), {
        tokenId: request.params.token_id,
        name: request.body.name,
      }),
  );
  r.delete(
    '/tokens/:token_id',
    {
      config: session,
      schema: {
        operationId: 'revokePersonalToken',
        summary: 'Revoke a personal access token',
        params: tokenIdParamsSchema,
        errors: ['token_not_found'],
        response: { 204: { type: 'null', description: 'Revoked' } },
      },
    },
    async (request, reply) => {
      await revokePersonalToken(ctxOf(services, request), services, { tokenId: request.params.token_id });
      return reply.code(204).send();
    },
  );

  r.post(
    '/agents/:agent_id/keys',
    {
      config: publish,
      schema: {
        operationId: 'createAgentKey',
        summary: 'Mint an agent key (the key is answered once)',
        params: agentParamsSchema,
        body: agentKeyMintBodySchema.optional(),
        errors: ['agent_not_found', 'credential_scope_denied'],
        response: { 201: agentKeyCreatedSchema },
      },
    },
    async (request, reply) =>
      reply.code(201).send(
        await mintAgentKey(ctxOf(services, request), {
          agentId: request.params.agent_id,
          name: request.body?.name,
        }),
      ),
  );
  r.get(
    '/agents/:agent_id/keys',
    {
      schema: {
        operationId: 'listAgentKeys',
        summary: "List an agent's live keys, by prefix",
        params: agentParamsSchema,
        errors: ['agent_not_found'],
        response: { 200: z.object({ items: z.array(agentKeySchema) }) },
      },
    },
    (request) => listAgentKeys(ctxOf(services, request), { agentId: request.params.agent_id }),
  );
  r.delete(
    '/keys/:key_id',
    {
      config: publish,
      schema: {
        operationId: 'revokeAgentKey',
        summary: 'Revoke an agent key',
        params: keyIdParamsSchema,
        errors: ['key_not_found', 'credential_scope_denied'],
        response: { 204: { type: 'null', description: 'Revoked' } },
      },
    },
    async (request, reply) => {
      await revokeAgentKey(ctxOf(services, request), services, { keyId: request.params.key_id });
      return reply.code(204).send();
    },
  );
}
