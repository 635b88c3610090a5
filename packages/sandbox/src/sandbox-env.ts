import { loopbackApiPort } from '@paddock/protocol';
import { sandboxLimits } from './limits.ts';
import type { SandboxSize } from './provider.ts';
import { sandboxPaths } from './sandbox-paths.ts';

// The environments of a sandbox with a filesystem of its own (bubblewrap, Docker, micro-VM).

/**
 * The supervisor's own environment: the sandbox starts from an empty one, and the supervisor reads none of
 * it. Each process it starts gets the thread's, from the runner.
 */
export function isolatedSupervisorEnv(): Record<string, string> {
  return { PATH: '/usr/bin:/bin' };
}

/**
 * What everything the supervisor starts sees (the runner gives it each process). `harnesses`: the provider shows
 * the program cache at its fixed path.
 */
export function isolatedSandboxEnv(
  env: Record<string, string>,
  size: SandboxSize,
  harnesses = false,
): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: sandboxPaths.workspace,
    LANG: 'C.UTF-8',
    NODE_OPTIONS: nodeHeapOption(size),
    ...env,
    PADDOCK_WORKSPACE: sandboxPaths.workspace,
    PADDOCK_API_URL: loopbackApiUrl(env.PADDOCK_API_URL),
    ...(harnesses ? { PADDOCK_HARNESS_DIR: sandboxPaths.harnesses } : {}),
  };
}

/**
 * Node sizes its heap from the memory it sees, which in a sandbox is the host's (the sandbox's
 * cgroup is not visible inside), so a program's garbage can outgrow the sandbox before V8 collects
 * it, and the sandbox's limit kills the program (Qwen Code's shell tool allocates some 450 MB at
 * once). Node is told half the sandbox's memory for its old generation instead, as Gemini CLI and
 * Qwen Code give themselves when they start again to raise their limit. The thread's own
 * NODE_OPTIONS replaces it.
 */
export function nodeHeapOption(size: SandboxSize): string {
  return `--max-old-space-size=${sandboxLimits[size].memoryBytes / 2 / 1024 ** 2}`;
}

/** Keeps any path prefix of the server's URL; only the origin changes to the sandbox's loopback end. */
export function loopbackApiUrl(hostUrl: string | undefined): string {
  const path = hostUrl ? new URL(hostUrl).pathname.replace(/\/$/, '') : '';
  return `http://127.0.0.1:${loopbackApiPort}${path}`;
}
