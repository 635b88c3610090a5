import { spawn } from 'node:child_process';
import { startChildSandbox } from './child-sandbox-process.ts';
import { supervisorMain } from './code-paths.ts';
import { descendantPids } from './process-tree.ts';
import type { SandboxProcess, SandboxProvider, SandboxSpec } from './provider.ts';

export interface ProcessProviderOptions {
  nodePath?: string;
  /** PATH for the supervisor and everything it starts. */
  path?: string;
  bootTimeoutMs?: number;
  /** The runner's program cache: its sandboxes use it where it is (PADDOCK_HARNESS_DIR). */
  harnessDir?: string;
}

/**
 * The fallback when bubblewrap is missing: the supervisor as a plain child process in the workspace,
 * with nothing but PATH in its environment (what it starts gets the thread's, from `configure`). It
 * shares the host's filesystem, network and user; a process that detaches itself from the
 * supervisor's tree (a double fork) survives destroy.
 */
export function createProcessProvider(options: ProcessProviderOptions = {}): SandboxProvider {
  const nodePath = options.nodePath ?? process.execPath;
  const path = options.path ?? '/usr/local/bin:/usr/bin:/bin';
  const bootTimeoutMs = options.bootTimeoutMs ?? 15_000;
  return {
    kind: 'process',
    isolation:
      'process: a plain child process in the workspace directory with a scrubbed environment; ' +
      'no filesystem, network or resource isolation',
    egress: false,
    sharedFolders: false,
    skills: 'host',
    apiUrlInside: (hostApiUrl) => hostApiUrl,
    sandboxEnv: (workspaceDir, env) => ({
      PATH: path,
      HOME: workspaceDir,
      LANG: 'C.UTF-8',
      ...env,
      PADDOCK_WORKSPACE: workspaceDir,
      ...(options.harnessDir === undefined ? {} : { PADDOCK_HARNESS_DIR: options.harnessDir }),
    }),
    close: async () => {},
    create(spec: SandboxSpec): Promise<SandboxProcess> {
      // No --workspace: the workspace is the cwd, and it moves when a standby is claimed (the
      // directory is renamed), so the supervisor takes its path from `configure`.
      const child = spawn(nodePath, [supervisorMain], {
        cwd: spec.workspaceDir,
        env: { PATH: path },
        stdio: ['pipe', 'pipe', 'pipe'],
        // Its own process group, so destroy can kill whatever the agent started along with it.
        detached: true,
      });
      return startChildSandbox({
        id: spec.id,
        child,
        bootTimeoutMs,
        onStderr: spec.onStderr,
        beforeKill: (pid) => {
          for (const descendant of descendantPids(pid)) killQuietly(descendant);
        },
        cleanup: async () => {},
      });
    },
  };
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}
