import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/** Paths the web app never answers: the API's own 404 (`{detail: "Not Found"}`) does. */
const apiPrefixes = ['/v2/', '/api/', '/.well-known/', '/docs'];

/**
 * The web application (D17) at `/`: the files Vite built into `webDir`, and for every other path
 * outside the API its `index.html` (the app's own router reads the path). Content-hashed assets
 * are cached for good; `index.html` is revalidated each time. Without a build, `/` says how to make one.
 */
export async function webAppRoutes(app: FastifyInstance, webDir: string): Promise<void> {
  const built = existsSync(join(webDir, 'index.html'));
  if (built) await app.register(fastifyStatic, { root: webDir, serve: false });
  app.get('/*', { config: { auth: false }, schema: { hide: true } }, async (request, reply) => {
    const path = request.url.split('?')[0]!;
    if (apiPrefixes.some((prefix) => path.startsWith(prefix))) return reply.callNotFound();
    if (!built)
      return reply
        .code(404)
        .type('text/plain')
        .send('The web app is not built here: run `npm run build -w @paddock/web` (npm install does).\n');
    const file = (request.params as { '*': string })['*'];
    if (file.startsWith('assets/') && existsSync(join(webDir, file)))
      return reply.header('cache-control', 'public, max-age=31536000, immutable').sendFile(file);
    return reply.header('cache-control', 'no-cache').sendFile('index.html');
  });
}
