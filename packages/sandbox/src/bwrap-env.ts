import { sandboxPaths } from './bwrap-args.ts';
import { loopbackApiPort } from './supervisor/loopback-proxy.ts';

/**
 * The supervisor's own environment: bwrap starts from an empty one, and the supervisor reads none of
 * it. Node alone reads NODE_COMPILE_CACHE, at start-up, which is why it cannot wait for `configure`.
 */
export function bwrapSupervisorEnv(compileCache: boolean): Record<string, string> {
  const env: Record<string, string> = { PATH: '/usr/bin:/bin' };
  if (compileCache) env.NODE_COMPILE_CACHE = sandboxPaths.compileCache;
  return env;
}

/**
 * What everything the supervisor starts sees (sent as `configure`). `harnesses`: the provider shows
 * the program cache at its fixed path.
 */
export function bwrapSandboxEnv(env: Record<string, string>, harnesses = false): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: sandboxPaths.workspace,
    LANG: 'C.UTF-8',
    ...env,
    PADDOCK_WORKSPACE: sandboxPaths.workspace,
    PADDOCK_API_URL: loopbackApiUrl(env.PADDOCK_API_URL),
    ...(harnesses ? { PADDOCK_HARNESS_DIR: sandboxPaths.harnesses } : {}),
  };
}

/** Keeps any path prefix of the server's URL; only the origin changes to the sandbox's loopback end. */
export function loopbackApiUrl(hostUrl: string | undefined): string {
  const path = hostUrl ? new URL(hostUrl).pathname.replace(/\/$/, '') : '';
  return `http://127.0.0.1:${loopbackApiPort}${path}`;
}
