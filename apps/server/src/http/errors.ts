import { PaddockError } from '@paddock/core';
import { errorStatus, stringDetailCodes } from '@paddock/protocol';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';

interface ValidationIssue {
  instancePath: string;
  message: string;
  keyword: string;
  params?: { keys?: string[] };
}

/** D3: a 422 lists each problem as `{loc, msg, type}`; unknown fields get one entry each. */
function validationDetail(context: string, issues: ValidationIssue[]) {
  return issues.flatMap((issue) => {
    const path = issue.instancePath.split('/').filter(Boolean);
    const loc = [context, ...path.map((p) => (/^\d+$/.test(p) ? Number(p) : p))];
    if (issue.keyword === 'unrecognized_keys' && issue.params?.keys) {
      return issue.params.keys.map((key) => ({
        loc: [...loc, key],
        msg: 'Extra inputs are not permitted',
        type: 'extra_forbidden',
      }));
    }
    return [{ loc, msg: issue.message, type: issue.keyword }];
  });
}

/**
 * The one place error codes become HTTP statuses and `{detail}` bodies. `page` answers what no
 * route does when it is a page of the web app (D17).
 */
export function installErrorHandling(
  app: FastifyInstance,
  page?: (request: FastifyRequest, reply: FastifyReply) => unknown,
): void {
  app.setNotFoundHandler(async (request, reply) => {
    if (page?.(request, reply) !== undefined) return reply;
    return reply.code(404).send({ detail: 'Not Found' });
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const context =
        error.validationContext === 'querystring' ? 'query' : (error.validationContext ?? 'body');
      return reply
        .code(422)
        .send({ detail: validationDetail(context, error.validation as ValidationIssue[]) });
    }
    const known: unknown = error;
    if (known instanceof PaddockError) {
      const status = errorStatus[known.code];
      if (known.retryAfter !== undefined) void reply.header('Retry-After', String(known.retryAfter));
      const detail = stringDetailCodes.has(known.code)
        ? known.message
        : { code: known.code, message: known.message, ...known.extra };
      return reply.code(status).send({ detail });
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return reply.code(413).send({ detail: 'Request body is too large' });
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return reply.code(415).send({ detail: 'Content-Type must be application/json' });
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        return reply
          .code(422)
          .send({ detail: [{ loc: ['body'], msg: 'Body is not valid JSON', type: 'json_invalid' }] });
    }
    if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
      return reply.code(error.statusCode).send({ detail: error.message });
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send({ detail: 'Internal Server Error' });
  });
}
