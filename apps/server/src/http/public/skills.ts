import { getSkill, getSkillVersion, listSkills, publishSkill, type Services } from '@paddock/core';
import {
  skillCreatorParamsSchema,
  skillListSchema,
  skillParamsSchema,
  skillPublishBodySchema,
  skillRecordSchema,
  skillVersionParamsSchema,
  skillVersionRecordSchema,
} from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { ctxOf } from '../context.ts';

/** The skills registry (D14): immutable versions of `<creator>/<slug>`, creator an organization. */
export function skillRoutes(app: FastifyInstance, services: Services): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.put(
    '/v2/skills/:creator/:slug/versions/:version',
    {
      // A sandbox's own token carries `publish` for its thread, not for its organization's registry.
      config: {
        auth: { scope: 'publish', refuseBound: { as: 'forbidden', what: 'publish skills', only: 'thread' } },
      },
      schema: {
        operationId: 'publishSkillVersion',
        summary: 'Publish an immutable version of a skill (the same content again is no change)',
        params: skillVersionParamsSchema,
        body: skillPublishBodySchema,
        errors: ['forbidden', 'invalid_skill', 'skill_version_conflict'],
        response: { 200: skillVersionRecordSchema, 201: skillVersionRecordSchema },
      },
    },
    async (request, reply) => {
      const { record, created } = await publishSkill(ctxOf(services, request), {
        ...request.params,
        body: request.body,
      });
      return reply.code(created ? 201 : 200).send(record);
    },
  );
  r.get(
    '/v2/skills/:creator',
    {
      schema: {
        operationId: 'listSkills',
        summary: "List a creator's skills the caller may read",
        params: skillCreatorParamsSchema,
        response: { 200: skillListSchema },
      },
    },
    (request) => listSkills(ctxOf(services, request), request.params),
  );
  r.get(
    '/v2/skills/:creator/:slug',
    {
      schema: {
        operationId: 'getSkill',
        summary: "Get a skill's versions and its latest",
        params: skillParamsSchema,
        errors: ['skill_not_found'],
        response: { 200: skillRecordSchema },
      },
    },
    (request) => getSkill(ctxOf(services, request), request.params),
  );
  r.get(
    '/v2/skills/:creator/:slug/versions/:version',
    {
      schema: {
        operationId: 'getSkillVersion',
        summary: 'Get one version of a skill, with its files',
        params: skillVersionParamsSchema,
        errors: ['skill_not_found'],
        response: { 200: skillVersionRecordSchema },
      },
    },
    (request) => getSkillVersion(ctxOf(services, request), request.params),
  );
}
