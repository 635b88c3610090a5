import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startChildSandbox } from '../child-sandbox-process.ts';
import type { SandboxProcess, SandboxProvider, SandboxSpec } from '../provider.ts';
import { buildSupervisor } from '../supervisor-link/build-supervisor.ts';
import { descendantPids } from './process-tree.ts';

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
 * with nothing but PATH in its environment (what it starts gets the thread's, from the runner). It
 * shares the host's filesystem, network and user; a process that detaches itself from the
 * supervisor's tree (a double fork) survives destroy.
 */
export function createProcessProvider(options: ProcessProviderOptions = {}): SandboxProvider {
  const nodePath = options.nodePath ?? process.execPath;
  const path = options.path ?? '/usr/local/bin:/usr/bin:/bin';
  const bootTimeoutMs = options.bootTimeoutMs ?? 15_000;
  // Built once, on the first boot, into a folder of this provider's own.
  let built: Promise<{ dir: string; main: string }> | undefined;
  const build = () => {
    built ??= mkdtemp(join(tmpdir(), 'paddock-supervisor-')).then(async (dir) => ({
      dir,
      main: await buildSupervisor(join(dir, 'supervisor')),
    }));
    return built;
  };
  return {
    kind: 'process',
    isolation:
      'process: a plain child process in the workspace directory with a scrubbed environment; ' +
      'no filesystem, network or resource isolation',
    egress: false,
    sharedFolders: false,
    skills: 'host',
    nodeDir: dirname(nodePath),
    apiUrlInside: (hostApiUrl) => hostApiUrl,
    sandboxEnv: (workspaceDir, env) => ({
      PATH: path,
      HOME: workspaceDir,
      LANG: 'C.UTF-8',
      ...env,
      PADDOCK_WORKSPACE: workspaceDir,
      ...(options.harnessDir === undefined ? {} : { PADDOCK_HARNESS_DIR: options.harnessDir }),
    }),
    // A later boot builds the supervisor again (a provider outlives the runners that close it).
    async close() {
      const made = await built?.catch(() => undefined);
      built = undefined;
      if (made) await rm(made.dir, { recursive: true, force: true });
    },
    async create(spec: SandboxSpec): Promise<SandboxProcess> {
      const { main } = await build();
      const child = spawn(main, [], {
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
        beforeKill: (pid, supervisor) => {
          for (const descendant of descendantPids(pid)) killQuietly(descendant);
          // What a process the supervisor started left in its group (a double fork) goes with it.
          for (const group of supervisor.started) killQuietly(-group);
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
