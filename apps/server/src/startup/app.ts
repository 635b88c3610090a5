import { createAuthenticator, createLoginSessions, type SecretBox, type Services } from '@paddock/core';
import type { ModelRouter } from '@paddock/models';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { buildApp } from '../http/app.ts';
import type { ReadableDataStore } from '../uploads/upload-store.ts';
import type { Config } from './config.ts';
import { loadRunnerToken } from './runner-token.ts';
import type { SandboxBackends } from './sandbox-backends.ts';

/**
 * The `iss` of the built-in identity provider's sessions: the same on every node of a deployment
 * (they share its keys through the database), whatever URL each listens on.
 */
const builtinIssuer = 'paddock';

/** The HTTP server over the composed services, with its login sessions and the runners' endpoint. */
export function paddockApp(
  config: Config,
  parts: {
    services: Services;
    secrets: SecretBox;
    sandboxes: SandboxBackends;
    models: ModelRouter;
    uploadDatastore: ReadableDataStore;
    logger: Logger;
  },
): Promise<FastifyInstance> {
  const { services } = parts;
  const sessions = createLoginSessions({
    store: services.store,
    secrets: parts.secrets,
    issuer: builtinIssuer,
    ttlMs: config.PADDOCK_SESSION_TTL_MS,
    external: config.PADDOCK_OIDC_ISSUER
      ? { issuer: config.PADDOCK_OIDC_ISSUER, audience: config.PADDOCK_OIDC_AUDIENCE! }
      : undefined,
  });
  const { detached, selfHosted } = parts.sandboxes.hubs;
  return buildApp({
    services,
    authenticator: createAuthenticator(services.store, { sessions }),
    sessions,
    signIn: {
      password: true,
      oidc: config.PADDOCK_OIDC_CLIENT_ID
        ? {
            issuer: config.PADDOCK_OIDC_ISSUER!,
            client_id: config.PADDOCK_OIDC_CLIENT_ID,
            scope: config.PADDOCK_OIDC_SCOPE,
          }
        : null,
    },
    enforceGuardedWrites: config.PADDOCK_ENFORCE_WRITE_SCOPES,
    models: parts.models,
    logger: parts.logger,
    bodyLimit: config.PADDOCK_BODY_LIMIT_BYTES,
    trustProxy: config.PADDOCK_TRUST_PROXY,
    keepaliveMs: config.PADDOCK_SSE_KEEPALIVE_MS,
    uploadDatastore: parts.uploadDatastore,
    webDir: config.webDir,
    threadHomes: services.store.dialect === 'postgres',
    runnerLink: {
      deployment: detached && {
        hub: detached,
        token: loadRunnerToken(config.PADDOCK_RUNNER_TOKEN, config.dataDir, true),
      },
      selfHosted,
    },
  });
}
