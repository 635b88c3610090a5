import { join } from 'node:path';
import serverEverything from '@modelcontextprotocol/server-everything/package.json' with { type: 'json' };
import { ProgramCache, sandboxHarnessDir } from '@paddock/harness';
import { testHarnessCache } from '@paddock/testing';
import type { TestServer } from '@paddock/testing/server';
import { json } from './helpers.ts';

/** The reference MCP server, at the version the project pins, installed as the runner installs programs. */
const packages = { '@modelcontextprotocol/server-everything': serverEverything.version };

/**
 * `@modelcontextprotocol/server-everything`'s entry file as the sandbox sees it. A sandbox holds
 * nothing of the project's node_modules: the server is installed from the npm registry into the test
 * servers' shared program cache (once a machine), which every sandbox shows read-only at
 * /opt/paddock/harnesses; the process provider runs it where it is on the host.
 */
export async function everythingEntry(server: Pick<TestServer, 'request'>): Promise<string> {
  const cache = new ProgramCache(testHarnessCache());
  await cache.ensure({ packages });
  const entry = join('node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
  const { providers } = await json<{ providers: { machine_kind: string; isolation?: string }[] }>(
    await server.request('GET', '/v2/machines/capabilities'),
    200,
  );
  const isolated = providers.find((p) => p.machine_kind === 'sandbox_a')?.isolation?.includes('bubblewrap');
  const dir = cache.dir({ packages });
  return isolated ? join(sandboxHarnessDir, dir.slice(cache.root.length + 1), entry) : join(dir, entry);
}
