import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Paths the web app never answers: the API's own 404s (each dialect's own body) do. */
const apiPrefixes = ['/v2/', '/v2?', '/api/', '/.well-known/', '/docs', '/healthz'];

const notBuilt = 'The web app is not built here: run `npm run build -w @paddock/web` (npm install does).\n';

/**
 * The web application (D17) at `/`: the files Vite built into `webDir`. Content-hashed assets are
 * cached for good; `index.html` is revalidated each time. Without a build, `/` says how to make one.
 */
export async function webAppRoutes(app: FastifyInstance, webDir: string): Promise<void> {
  const built = existsSync(join(webDir, 'index.html'));
  if (built) await app.register(fastifyStatic, { root: webDir, serve: false });
  const page = { config: { auth: false as const }, schema: { hide: true } };
  app.get('/', page, (_request, reply) => index(reply, built));
  app.get('/assets/*', page, (request, reply) => {
    const file = (request.params as { '*': string })['*'];
    if (!built || !existsSync(join(webDir, 'assets', file))) return reply.callNotFound();
    return reply.header('cache-control', 'public, max-age=31536000, immutable').sendFile(`assets/${file}`);
  });
}

/**
 * For the server's not-found handler: a page of the app (any other GET outside the API, which the
 * app's own router reads), answered with `index.html`; undefined for everything else.
 */
export function webAppPage(webDir: string) {
  const built = () => existsSync(join(webDir, 'index.html'));
  return (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> | FastifyReply | undefined => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return undefined;
    if (apiPrefixes.some((prefix) => request.url.startsWith(prefix))) return undefined;
    return index(reply, built());
  };
}

function index(reply: FastifyReply, built: boolean) {
  if (!built) return reply.code(404).type('text/plain').send(notBuilt);
  return reply.header('cache-control', 'no-cache').sendFile('index.html');
}
