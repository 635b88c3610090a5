import { createReadStream } from 'node:fs';
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import fastifySwagger, { type SwaggerTransform, type SwaggerTransformObject } from '@fastify/swagger';
import { PaddockError } from '@paddock/core';
import { type ErrorCode, errorBodySchema, errorStatus } from '@paddock/protocol';
import type { FastifyInstance, FastifySchema } from 'fastify';
import {
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteAuth } from './auth.ts';
import { controlPlanePrefixes } from './control-plane/index.ts';

declare module 'fastify' {
  interface FastifySchema {
    /**
     * The error codes the route answers besides those its `config.auth` and its request schemas
     * imply (401 and 503 on every authenticated route, 403 for a scope, 422 for a request schema…).
     * Documentation only: each becomes an error answer of its status in the OpenAPI document.
     */
    errors?: readonly ErrorCode[];
  }
}

/** The operations' tags, each with the paths it covers (the first that matches). */
const tags = [
  { name: 'Threads', paths: /^\/v2\/threads\b/, description: "An agent's conversations: messages, events." },
  {
    name: 'Tasks',
    paths: /^\/v2\/tasks\/[^/]+\/(inputs|interrupt|events)\b/,
    description: 'A thread addressed as a task: follow-up inputs, Stop.',
  },
  {
    name: 'Files',
    paths: /^\/v2\/(tasks\/[^/]+\/files|uploads)\b/,
    description: "A task's workspace: reads, resumable uploads (tus 1.0).",
  },
  { name: 'Code', paths: /^\/v2\/tasks\/[^/]+\/code\b/, description: "Code runs in a task's sandbox." },
  { name: 'Agents', paths: /^\/v2\/agents\b/, description: 'Agents on the public surface.' },
  { name: 'Machines', paths: /^\/v2\/machines\b/, description: 'Sandbox providers, sizes and features.' },
  {
    name: 'Harnesses',
    paths: /^\/v2\/harnesses\b/,
    description: 'The agent programs behind each harness value, and whether this node has them.',
  },
  {
    name: 'Skills',
    paths: /^\/v2\/skills\b/,
    description: "The skills registry: organizations' published, immutable skill versions.",
  },
  {
    name: 'MCP authorization',
    paths: /^\/v2\/mcp\b/,
    description: "Where an MCP server's authorization server sends the user back (OAuth).",
  },
  {
    name: 'Model gateway',
    paths: /^\/v2\/gateway\b/,
    description: 'One model router in every client dialect: OpenAI, Anthropic, Gemini.',
  },
  {
    name: 'Authentication',
    paths: /^\/(v2\/auth|\.well-known)\b/,
    description: 'Login sessions of the built-in identity provider.',
  },
  {
    name: 'Control plane',
    paths: /^\/v2\/cli\b/,
    description: "The command-line client's surface: orgs, teams, agents, credentials, orchestrations.",
  },
  {
    name: 'Control plane (/api/cli)',
    paths: /^\/api\/cli\b/,
    description: 'The same control plane under its second prefix; operation ids start with `apiCli`.',
  },
  {
    name: 'Service',
    paths: /^\/(healthz|docs|v2\/openapi\.json)\b/,
    description: 'Health, this document and its reference page.',
  },
];

/** Serves the OpenAPI document at `/v2/openapi.json` and a reference page rendering it at `/docs`. */
export async function installOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(fastifySwagger, {
    openapi: {
      info: {
        title: 'Paddock',
        description:
          'Runs AI agents in isolated sandboxes. Every error answer is `{detail}`: a string, a `{code, message}` object, or (a request that failed validation) a list of `{loc, msg, type}`; each error answer below names the codes it stands for.',
        version: '2',
      },
      servers: [{ url: '/' }],
      tags: tags.map(({ name, description }) => ({ name, description })),
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            description: 'A personal access token, an agent key, a thread token, or a login session (JWT).',
          },
        },
      },
      security: [{ bearer: [] }],
    },
    transform: documentRoute,
    transformObject: (document) => withoutUnusedSchemas(jsonSchemaTransformObject(document)),
  });

  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/openapi.json',
    {
      config: { auth: false },
      schema: {
        operationId: 'getOpenApiDocument',
        summary: 'This OpenAPI document',
        response: { 200: rawBody('The OpenAPI 3 document', 'application/json') },
      },
    },
    () => app.swagger(),
  );

  // The renderer's files are served from node_modules, so the page works offline.
  const { resolve } = createRequire(import.meta.url);
  const assets = new Map(
    Object.entries({ 'swagger-ui-bundle.js': 'text/javascript', 'swagger-ui.css': 'text/css' }).map(
      ([name, type]) => [name, { type, file: resolve(`swagger-ui-dist/${name}`) }],
    ),
  );
  r.get(
    '/docs',
    {
      config: { auth: false },
      schema: {
        operationId: 'getApiReference',
        summary: 'The API reference: this document rendered as a page',
        response: { 200: rawBody('An HTML page', 'text/html') },
      },
    },
    async (_request, reply) => reply.type('text/html; charset=utf-8').send(referencePage),
  );
  r.get(
    '/docs/:asset',
    {
      config: { auth: false },
      schema: {
        operationId: 'getApiReferenceAsset',
        summary: 'A script or stylesheet of the API reference page',
        errors: ['not_found'],
        response: { 200: rawBody('The file', 'text/javascript', 'text/css') },
      },
    },
    async (request, reply) => {
      const asset = assets.get((request.params as { asset: string }).asset);
      if (!asset) throw new PaddockError('not_found', 'Not Found');
      return reply
        .type(`${asset.type}; charset=utf-8`)
        .header('cache-control', 'public, max-age=3600')
        .send(createReadStream(asset.file));
    },
  );
}

const referencePage = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Paddock API</title>
<link rel="stylesheet" href="/docs/swagger-ui.css">
</head>
<body>
<div id="reference"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script>SwaggerUIBundle({ url: '/v2/openapi.json', dom_id: '#reference', deepLinking: true, validatorUrl: null });</script>
</body>
</html>
`;

/**
 * A route's operation: its own `operationId`, `summary` and answers, and what follows from the
 * route: the tag of its path, `security: []` on a public route, and an error answer for each
 * status among its error codes (`schema.errors` and those `config.auth` and its request schemas
 * imply). The second control-plane prefix gets operation ids of its own.
 */
const documentRoute: SwaggerTransform = (input) => {
  const { route, url } = input;
  const {
    errors = [],
    response = {},
    ...schema
  } = (input.schema ?? {}) as FastifySchema & {
    response?: Record<string, unknown>;
  };
  if (schema.hide) return { schema: { hide: true }, url };
  const auth = route.config?.auth;
  const rules: RouteAuth = auth || {};
  const codes = new Set<ErrorCode>(errors);
  if (auth !== false)
    for (const code of ['missing_token', 'invalid_token', 'unavailable'] as const) codes.add(code);
  if (rules.scope || rules.guarded) codes.add('scope_denied');
  if (rules.session) codes.add('jwt_required');
  if (rules.refuseBound) codes.add(rules.refuseBound.as);
  if (schema.params || schema.querystring || schema.body) codes.add('validation');
  if (schema.body) codes.add('payload_too_large');

  // Answers without a body (a 204, tus's header-only answers) are OpenAPI already; the rest are zod.
  const bodiless = Object.entries(response).filter(([, answer]) => isBodiless(answer));
  const typed: Record<string, unknown> = Object.fromEntries(
    Object.entries(response).filter(([, answer]) => !isBodiless(answer)),
  );
  for (const [status, group] of Map.groupBy(codes, (code) => errorStatus[code])) {
    typed[status] ??= {
      description: `${STATUS_CODES[status]}: ${group.map((code) => `\`${code}\``).join(', ')}`,
      content: { 'application/json': { schema: errorBodySchema } },
    };
  }
  const transformed = jsonSchemaTransform({ ...input, schema: { ...schema, response: typed } });
  const answers = transformed.schema.response as Record<string, { description?: string }>;
  // An answer's description: the status's name, unless the route gave one.
  for (const [status, answer] of Object.entries(answers)) answer.description ??= STATUS_CODES[status];
  const alias = url.startsWith(`${controlPlanePrefixes[1]}/`);
  // @fastify/swagger suffixes a HEAD route's id with `-head`, which an explicit HEAD route needs not.
  const id = schema.operationId?.replace(/-head$/, '');
  const operationId = id && alias ? `apiCli${capitalized(id)}` : id;
  const tag = tags.find(({ paths }) => paths.test(url));
  return {
    url,
    schema: {
      ...transformed.schema,
      response: { ...answers, ...Object.fromEntries(bodiless) },
      operationId,
      tags: tag ? [tag.name] : [],
      ...(auth === false && !schema.security ? { security: [] } : {}),
    },
  };
};

/** A response body that is not JSON Paddock builds (a page, a file, a stream), for the document. */
export function rawBody(description: string, ...contentTypes: string[]) {
  const schema = z.unknown().meta({ type: 'string' });
  return { description, content: Object.fromEntries(contentTypes.map((type) => [type, { schema }])) };
}

/** An answer declared as OpenAPI with `type: 'null'`: no body, perhaps headers. */
function isBodiless(answer: unknown): boolean {
  return typeof answer === 'object' && answer !== null && (answer as { type?: unknown }).type === 'null';
}

function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The registered zod schemas become components twice (as input and as output); the document keeps
 * those it refers to, directly or through another component.
 */
function withoutUnusedSchemas<T extends ReturnType<SwaggerTransformObject>>(document: T): T {
  const schemas = 'components' in document ? document.components?.schemas : undefined;
  if (!schemas) return document;
  const refersTo = (value: unknown) =>
    [...JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)].map((match) => match[1]!);
  const used = new Set(refersTo({ ...document, components: { schemas: {} } }));
  // A set visits what is added while it is iterated: the components' own references are followed.
  for (const name of used) for (const next of refersTo(schemas[name])) used.add(next);
  for (const name of Object.keys(schemas)) if (!used.has(name)) delete schemas[name];
  return document;
}
