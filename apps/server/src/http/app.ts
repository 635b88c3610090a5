import type { Authenticator, LoginSessions, Services } from '@paddock/core';
import type { ModelRouter } from '@paddock/models';
import type { AddressRange, SignInProviders } from '@paddock/protocol';
import type { DataStore } from '@tus/server';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import type { Logger } from 'pino';
import { z } from 'zod';
import { installAuth } from './auth.ts';
import { controlPlaneRoutes } from './control-plane/index.ts';
import { installErrorHandling } from './errors.ts';
import { gatewayRoutes } from './gateway/index.ts';
import { loginRoutes } from './login.ts';
import { installOpenApi } from './openapi.ts';
import { agentRoutes } from './public/agents.ts';
import { codeRoutes } from './public/code.ts';
import { eventStreamRoutes } from './public/event-stream.ts';
import { fileRoutes } from './public/files.ts';
import { harnessRoutes } from './public/harnesses.ts';
import { machineRoutes } from './public/machines.ts';
import { mcpOauthRoutes } from './public/mcp-oauth.ts';
import { mcpRelayRoutes } from './public/mcp-relay.ts';
import { skillRoutes } from './public/skills.ts';
import { taskRoutes } from './public/tasks.ts';
import { threadRoutes } from './public/threads.ts';
import { uploadRoutes } from './public/uploads.ts';
import { type RunnerLinkOptions, runnerLinkRoutes } from './runner-link.ts';
import { installThreadHomes } from './thread-homes.ts';
import { tusUploadRoutes } from './tus-uploads.ts';
import { webAppPage, webAppRoutes } from './web-app.ts';

export interface AppOptions {
  services: Services;
  authenticator: Authenticator;
  sessions: LoginSessions;
  /** How a browser signs in (`GET /v2/auth/providers`). */
  signIn: SignInProviders;
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
  /** The built web app (D17), served at `/`. */
  webDir: string;
  /** Other nodes share the database: a thread's workspace requests go to the node holding it. */
  threadHomes: boolean;
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
    logController: new RequestLog(),
  });
  app.setValidatorCompiler(validatorCompiler);
  // Response schemas document the API (OpenAPI); the bodies are built by typed code, so they are
  // serialized without re-validating each one on the hot path.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  installErrorHandling(app, webAppPage(options.webDir));
  // An empty body is no body, whatever its Content-Type says: a route whose body is optional (Stop)
  // takes it, and one that needs a body answers the same 422 as for a request without one.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, null);
    else parseJson(request, body as string, done);
  });
  // First: the document is made of the routes registered after it.
  await installOpenApi(app);
  // Before authentication: the node a request goes on to authenticates it.
  if (options.threadHomes) installThreadHomes(app, options.services);
  installAuth(app, options.authenticator, { enforceGuardedWrites: options.enforceGuardedWrites });
  // Graceful close: requests in flight get a short grace, then every connection still open (a client's
  // idle keep-alive socket that went quiet after close began, a stalled request) is closed.
  app.addHook('preClose', async () => {
    app.server.closeIdleConnections();
    setTimeout(() => app.server.closeAllConnections(), 2000).unref();
  });

  app.get(
    '/healthz',
    {
      config: { auth: false },
      schema: {
        operationId: 'getHealth',
        summary: 'Whether the server is up',
        response: { 200: z.object({ ok: z.literal(true) }) },
      },
    },
    () => ({ ok: true }),
  );
  loginRoutes(app, options);
  threadRoutes(app, options.services);
  taskRoutes(app, options.services);
  machineRoutes(app, options.services);
  harnessRoutes(app, options.services);
  agentRoutes(app, options.services);
  codeRoutes(app, options.services);
  await mcpRelayRoutes(app, options.services);
  mcpOauthRoutes(app, options.services);
  fileRoutes(app, options.services);
  uploadRoutes(app, options.services);
  skillRoutes(app, options.services);
  await tusUploadRoutes(app, options.services, options.uploadDatastore);
  eventStreamRoutes(app, options.services, { keepaliveMs: options.keepaliveMs });
  gatewayRoutes(app, options.services, options.models);
  await controlPlaneRoutes(app, options.services);
  await webAppRoutes(app, options.webDir);
  if (options.runnerLink)
    await runnerLinkRoutes(app, {
      ...options.runnerLink,
      authenticator: options.authenticator,
      services: options.services,
    });
  return app;
}

/**
 * One log line per request, when it completes, at `debug` (Fastify's own are two, at `info`): the
 * default level shows none. The URL's query keeps no credential (a presigned upload URL's
 * `signature`).
 */
class RequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: withoutQuerySecrets(request.url),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.debug(line, 'request');
  }
}

/** The URL with the values of query parameters that carry a credential left out. */
function withoutQuerySecrets(url: string): string {
  const at = url.indexOf('?');
  if (at < 0) return url;
  const query = new URLSearchParams(url.slice(at + 1));
  for (const key of new Set(query.keys()))
    if (/signature|token|secret|password|key/i.test(key)) query.set(key, 'redacted');
  return `${url.slice(0, at)}?${query}`;
}
