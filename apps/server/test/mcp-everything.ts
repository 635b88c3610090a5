import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { sandboxCodeLayout } from '@paddock/sandbox';
import type { TestServer } from '@paddock/testing/server';
import { json } from './helpers.ts';

/**
 * `@modelcontextprotocol/server-everything`'s entry file as the sandbox sees it: a bubblewrap
 * sandbox shows the project's node_modules read-only under its own path, the process provider runs
 * on the host's.
 */
export async function everythingEntry(server: Pick<TestServer, 'request'>): Promise<string> {
  const hostPath = join(
    dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-everything/package.json')),
    'dist',
    'index.js',
  );
  const { providers } = await json<{ providers: { machine_kind: string; isolation?: string }[] }>(
    await server.request('GET', '/v2/machines/capabilities'),
    200,
  );
  if (!providers.find((p) => p.machine_kind === 'sandbox_a')?.isolation?.includes('bubblewrap'))
    return hostPath;
  const dir = sandboxCodeLayout(process.execPath).dirs.find(
    (d) => !relative(d.host, hostPath).startsWith('..'),
  )!;
  return join(dir.inside, relative(dir.host, hostPath));
}
