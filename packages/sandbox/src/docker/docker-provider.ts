import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { type CodeDir, sandboxCodeLayout, socketDoorsCommand } from '../code-paths.ts';
import { harnessCodeDir } from '../harness-dir.ts';
import { sandboxLimits } from '../limits.ts';
import type { SandboxProcess, SandboxProvider, SandboxSpec } from '../provider.ts';
import { ReadOnlyViews } from '../read-only-views.ts';
import { isolatedSandboxEnv, isolatedSupervisorEnv, loopbackApiUrl } from '../sandbox-env.ts';
import { containerConfig, containerLabels } from './container-config.ts';
import { startContainerSandbox } from './container-sandbox.ts';
import type { DockerEngine } from './engine.ts';

export interface DockerProviderOptions {
  engine: DockerEngine;
  /** The base image sandboxes run (built by `paddock docker-image`). */
  image: string;
  /** The runner's state dir: it names the runner on its containers (see `containerLabels`). */
  stateDir: string;
  /** The uid (and gid) sandboxes run as when the host process is root. Default 65534. */
  sandboxUid?: number;
  nodePath?: string;
  bootTimeoutMs?: number;
  /** The runner's program cache (ProgramCache's root), shown read-only at /opt/paddock/harnesses. */
  harnessDir?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export interface DockerProvider extends SandboxProvider {
  readonly kind: 'docker';
}

/**
 * `sandbox_b`: a container per sandbox on a Docker engine, running the same supervisor as the other
 * providers (it and Node bound in read-only), with no network but the API proxy.
 */
export async function createDockerProvider(options: DockerProviderOptions): Promise<DockerProvider> {
  const { engine, image } = options;
  const layout = await sandboxCodeLayout(
    join(options.stateDir, 'supervisor'),
    options.nodePath ?? process.execPath,
  );
  const asRoot = process.getuid?.() === 0;
  // As for bwrap: views, so the container's mountinfo does not name the checkout.
  const views = await ReadOnlyViews.open(join(options.stateDir, 'views'), asRoot);
  const code: CodeDir[] = [];
  for (const dir of layout.dirs) code.push({ host: await views.show(dir.host), inside: dir.inside });
  code.push(...(await harnessCodeDir(options.harnessDir)));
  // Not root: the workspace belongs to the server's user, so the sandbox runs as that user.
  const uid = asRoot ? (options.sandboxUid ?? 65534) : (process.getuid?.() ?? 65534);
  const bootTimeoutMs = options.bootTimeoutMs ?? 30_000;
  const runnerKey = createHash('sha256').update(options.stateDir).digest('hex').slice(0, 16);
  const command = (sandboxUid: number) => [
    ...socketDoorsCommand(layout),
    // As root, the supervisor takes the sandbox's uid itself, keeping root's real uid out of its reach.
    ...(asRoot ? ['--uid', String(sandboxUid)] : []),
  ];

  await removeLeftovers(engine, runnerKey, options.log);

  return {
    kind: 'docker',
    isolation: [
      `Docker containers on ${engine.name} from image ${image}`,
      asRoot
        ? "runs as its workspace's own uid, without capabilities, under the engine's default seccomp profile; its supervisor keeps root's real uid (only CAP_SETUID and CAP_SETGID), out of that uid's reach"
        : `runs as uid ${uid} without capabilities, under the engine's default seccomp profile`,
      "Paddock's supervisor and Node read-only at /opt/paddock, nothing else of Paddock's",
      "no network of its own: the Paddock API, and out by the thread's network policy, through proxy sockets",
      'read-only image; memory, cpu and pids limits of the size (sandbox_b: L)',
    ].join('; '),
    egress: true,
    sharedFolders: false,
    skills: 'bound',
    nodeDir: layout.nodeDir,
    apiUrlInside: loopbackApiUrl,
    sandboxEnv: (_workspaceDir, env, size) => isolatedSandboxEnv(env, size, options.harnessDir !== undefined),
    async create(spec: SandboxSpec): Promise<SandboxProcess> {
      // The id names the container, so it must be one plain segment.
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$/.test(spec.id))
        throw new Error(`invalid sandbox id: ${spec.id}`);
      // Its workspace's uid: the workspace was made owned by it (workspaces/), nothing is chowned here.
      const sandboxUid = asRoot ? (spec.uid ?? uid) : uid;
      const containerId = await engine.createContainer(
        `paddock-${spec.id}`,
        containerConfig({
          image,
          id: spec.id,
          runnerKey,
          command: command(sandboxUid),
          env: isolatedSupervisorEnv(),
          uid: sandboxUid,
          supervisorDrops: asRoot,
          workspaceDir: spec.workspaceDir,
          code,
          apiSocket: spec.apiSocket,
          egressSocket: spec.egressSocket,
          skills: spec.skills,
          limits: sandboxLimits[spec.size],
        }),
      );
      return startContainerSandbox({
        engine,
        id: spec.id,
        containerId,
        bootTimeoutMs,
        onStderr: spec.onStderr,
      });
    },
    close: () => views.release(),
  };
}

/** Containers a runner of the same state dir left behind (a crash): their supervisors are cut off. */
async function removeLeftovers(
  engine: DockerEngine,
  runnerKey: string,
  log: DockerProviderOptions['log'],
): Promise<void> {
  const leftovers = await engine.containersLabelled(`${containerLabels.runner}=${runnerKey}`);
  for (const id of leftovers) {
    log?.('info', `removing leftover sandbox container ${id.slice(0, 12)}`);
    await engine.remove(id);
  }
}
