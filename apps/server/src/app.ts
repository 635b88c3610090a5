import fastifySwagger from '@fastify/swagger';
import type { AddressRange, Authenticator, LoginSessions, Services } from '@paddock/core';
import type { ModelRouter } from '@paddock/models';
import type { DataStore } from '@tus/server';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject, validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { installAuth } from './http/auth.ts';
import { controlPlaneRoutes } from './http/control-plane/index.ts';
import { installErrorHandling } from './http/errors.ts';
import { gatewayRoutes } from './http/gateway.ts';
import { loginRoutes } from './http/login.ts';
import { agentRoutes } from './http/public/agents.ts';
import { codeRoutes } from './http/public/code.ts';
import { eventStreamRoutes } from './http/public/event-stream.ts';
import { fileRoutes } from './http/public/files.ts';
import { machineRoutes } from './http/public/machines.ts';
import { taskRoutes } from './http/public/tasks.ts';
import { threadRoutes } from './http/public/threads.ts';
import { uploadRoutes } from './http/public/uploads.ts';
import { type RunnerLinkOptions, runnerLinkRoutes } from './http/runner-link.ts';
import { tusUploadRoutes } from './http/tus-uploads.ts';

export interface AppOptions {
  services: Services;
  authenticator: Authenticator;
  sessions: LoginSessions;
  /** Enforce the guarded writes outside the control plane; off, a would-be denial is only logged. */
  enforceGuardedWrites: boolean;
  models: ModelRouter;
  logger: Logger;
  bodyLimit: number;
  /** Proxies whose `X-Forwarded-For` is believed (`request.ip`); none: the socket's address. */
  trustProxy?: readonly AddressRange[];
  keepaliveMs: number;
  /** The upload store the presigned tus endpoint writes into. */
  uploadDatastore: DataStore;
  /** The endpoint runners connect to: the deployment's detached ones, and self-hosted ones. */
  runnerLink?: Omit<RunnerLinkOptions, 'authenticator' | 'services'>;
}

/** The HTTP surface: wiring only. Routes parse with protocol schemas and call one core verb. */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const app: FastifyInstance = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    bodyLimit: options.bodyLimit,
    trustProxy: options.trustProxy?.map((range) => `${range.address}/${range.prefix}`) ?? false,
    genReqId: (req) =>
      (req.headers['x-request-id'] as string | undefined)?.slice(0, 100) || crypto.randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
  });
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API (OpenAPI); the bodies are built by typed code, so they are
  // serialized without re-validating each one on the hot path.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app);
  await app.register(fastifySwagger, {
    openapi: {
      info: { title: 'Paddock', description: 'Runs AI agents in isolated sandboxes.', version: '2' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
    // Schemas registered with an id (the recursive file tree node) become components.
    transformObject: jsonSchemaTransformObject,
  });
  installAuth(app, options.authenticator, { enforceGuardedWrites: options.enforceGuardedWrites });
  // Graceful close: requests in flight get a short grace, then every connection still open (a client's
  // idle keep-alive socket that went quiet after close began, a stalled request) is closed.
  app.addHook('preClose', async () => {
    app.server.closeIdleConnections();
    setTimeout(() => app.server.closeAllConnections(), 2000).unref();
  });

  app.get('/v2/openapi.json', { config: { auth: false }, schema: { hide: true } }, () => app.swagger());
  app.get('/healthz', { config: { auth: false }, schema: { hide: true } }, () => ({ ok: true }));
  loginRoutes(app, options.sessions, options.services.revocations);
  threadRoutes(app, options.services);
  taskRoutes(app, options.services);
  machineRoutes(app, options.services);
  agentRoutes(app, options.services);
  codeRoutes(app, options.services);
  fileRoutes(app, options.services);
  uploadRoutes(app, options.services);
  await tusUploadRoutes(app, options.services, options.uploadDatastore);
  eventStreamRoutes(app, options.services, { keepaliveMs: options.keepaliveMs });
  gatewayRoutes(app, options.models);
  await controlPlaneRoutes(app, options.services);
  if (options.runnerLink)
    await runnerLinkRoutes(app, {
      ...options.runnerLink,
      authenticator: options.authenticator,
      services: options.services,
    });
  return app;
}
