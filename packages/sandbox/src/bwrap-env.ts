import { basename } from 'node:path';
import { sandboxPaths } from './bwrap-args.ts';
import type { SandboxSpec } from './provider.ts';
import { loopbackApiPort } from './supervisor/loopback-proxy.ts';

/** The sandbox's whole environment: bwrap starts from an empty one. */
export function bwrapSandboxEnv(
  spec: SandboxSpec,
  apiUrl: string | undefined,
  compileCache: boolean,
): Record<string, string> {
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: sandboxPaths.workspace,
    LANG: 'C.UTF-8',
    ...spec.env,
    PADDOCK_WORKSPACE: sandboxPaths.workspace,
  };
  if (apiUrl !== undefined) env.PADDOCK_API_URL = apiUrl;
  if (spec.apiSocket) env.PADDOCK_PROXY_SOCKET = `${sandboxPaths.apiSocketDir}/${basename(spec.apiSocket)}`;
  if (compileCache) env.NODE_COMPILE_CACHE = sandboxPaths.compileCache;
  return env;
}

/** Keeps any path prefix of the server's URL; only the origin changes to the sandbox's loopback end. */
export function loopbackApiUrl(hostUrl: string | undefined): string {
  const path = hostUrl ? new URL(hostUrl).pathname.replace(/\/$/, '') : '';
  return `http://127.0.0.1:${loopbackApiPort}${path}`;
}
