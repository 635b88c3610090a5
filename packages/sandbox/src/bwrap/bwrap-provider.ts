import { chmod, chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startChildSandbox } from '../child-sandbox-process.ts';
import { type CodeDir, sandboxCodeLayout, socketDoorsCommand } from '../code-paths.ts';
import { harnessCodeDir } from '../harness-dir.ts';
import { sandboxLimits } from '../limits.ts';
import type { SandboxProcess, SandboxProvider, SandboxSpec } from '../provider.ts';
import { ReadOnlyViews } from '../read-only-views.ts';
import { isolatedSandboxEnv, isolatedSupervisorEnv, loopbackApiUrl } from '../sandbox-env.ts';
import { buildSandboxEtc } from '../sandbox-etc.ts';
import { bwrapArgs } from './bwrap-args.ts';
import { spawnBwrap } from './bwrap-launch.ts';
import {
  type CgroupConfig,
  cgroupsUsable,
  ownCgroupConfig,
  removeEmptyGroups,
  removeLeftoverGroups,
  removeOwnParent,
  SandboxCgroup,
} from './cgroups.ts';
import { sandboxUserArgs } from './sandbox-user.ts';
import { sandboxSeccompFilter } from './seccomp-filter.ts';
import { releaseLeftoverMounts, SharedMount } from './shared-mount.ts';
import { type Launcher, StandbyLauncher } from './standby-launcher.ts';

export interface BwrapProviderOptions {
  /** Holds the staged /etc and the supervisor the sandboxes run. */
  stateDir: string;
  bwrapPath?: string;
  setprivPath?: string;
  /** The uid (and gid) sandboxes run as when the host process is root. Default 65534. */
  sandboxUid?: number;
  /** cgroup v1 location; `false` runs without limits. */
  cgroups?: CgroupConfig | false;
  nodePath?: string;
  bootTimeoutMs?: number;
  /** The runner's program cache (ProgramCache's root), shown read-only at /opt/paddock/harnesses. */
  harnessDir?: string;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
}

export interface BwrapProvider extends SandboxProvider {
  readonly kind: 'bwrap';
  /** Whether sandboxes get the S/M/L limits. */
  readonly cgroups: boolean;
}

export const defaultSandboxUid = 65534;

/** `sandbox_a` with bubblewrap: namespaces, an unprivileged uid, no network but the API proxy, cgroup limits. */
export async function createBwrapProvider(options: BwrapProviderOptions): Promise<BwrapProvider> {
  const bwrapPath = options.bwrapPath ?? '/usr/bin/bwrap';
  const setprivPath = options.setprivPath ?? '/usr/bin/setpriv';
  const layout = await sandboxCodeLayout(
    join(options.stateDir, 'supervisor'),
    options.nodePath ?? process.execPath,
  );
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? (options.sandboxUid ?? defaultSandboxUid) : undefined;
  // Its own cgroup parent unless told one (tests): what a crashed predecessor left there is its own.
  const ownGroups = options.cgroups === undefined;
  const cgroupConfig =
    options.cgroups === false ? undefined : (options.cgroups ?? ownCgroupConfig(options.stateDir));
  const limited = cgroupConfig !== undefined && (await cgroupsUsable(cgroupConfig));
  if (cgroupConfig && limited) await (ownGroups ? removeLeftoverGroups : removeEmptyGroups)(cgroupConfig);
  const bootTimeoutMs = options.bootTimeoutMs ?? 15_000;

  await mkdir(options.stateDir, { recursive: true });
  const etcDir = join(options.stateDir, 'etc');
  // Shared folders need mounts on the host, so root; see shared-mount.ts.
  const sharedRoot = asRoot ? join(options.stateDir, 'shared-mounts') : undefined;
  if (sharedRoot) await releaseLeftoverMounts(sharedRoot);
  await buildSandboxEtc(etcDir, uid ?? process.getuid?.() ?? 0);
  // What sandboxes bind read-only is shown through views, so no bind names a host path (the checkout,
  // the data dir); see read-only-views.ts.
  const views = await ReadOnlyViews.open(join(options.stateDir, 'views'), asRoot);
  const code: CodeDir[] = [];
  for (const dir of layout.dirs) code.push({ host: await views.show(dir.host), inside: dir.inside });
  code.push(...(await harnessCodeDir(options.harnessDir)));
  const etc = await views.show(etcDir);
  const seccomp = sandboxSeccompFilter();
  if (!seccomp) options.log?.('warn', `no seccomp filter for ${process.arch}: sandboxes run without one`);
  const usersDir = join(options.stateDir, 'users');
  const launch = { bwrapPath, setprivPath, privileged: uid !== undefined, seccomp };
  // Fixed paths only: launchers are spawned before the spec of their sandbox is known. As root, the
  // supervisor takes the sandbox's uid itself, keeping root's real uid out of its user's reach.
  const supervisorCommand = socketDoorsCommand(layout);

  const standby = new StandbyLauncher(async (name): Promise<Launcher> => {
    const cgroup = cgroupConfig && limited ? await SandboxCgroup.create(cgroupConfig, name) : undefined;
    const shared = sharedRoot ? await SharedMount.prepare(sharedRoot, name) : undefined;
    const launcher = spawnBwrap({
      ...launch,
      cgroupProcs: cgroup?.procsFiles,
      command: supervisorCommand,
      supervisorDrops: uid !== undefined,
    });
    launcher.child.on('error', () => {});
    return { launcher, cgroup, shared };
  });
  standby.refill();

  const isolation = [
    `bubblewrap: own ${asRoot ? '' : 'user, '}pid, network, ipc, uts, cgroup and mount namespaces`,
    uid === undefined
      ? 'runs as the server user'
      : "runs as its workspace's own uid, without capabilities, no_new_privs; its supervisor keeps root's real uid (only CAP_SETUID and CAP_SETGID), out of that uid's reach: no trace, no signal",
    seccomp
      ? "seccomp filter: no new namespaces (so no user namespaces), mount, keyctl, bpf, perf_event_open, kexec, modules, io_uring and the rest of Docker's default refusals"
      : `no seccomp filter (none for ${process.arch})`,
    `Paddock's supervisor and Node read-only at /opt/paddock, nothing else of Paddock's${views.hiding ? '' : ' (their host paths show in /proc/self/mountinfo)'}; a generated /etc`,
    "network only through proxies: to the Paddock API, and out by the thread's network policy",
    limited
      ? 'S/M/L limits through cgroup v1 (memory, cpu, pids)'
      : `no resource limits (${cgroupConfig ? 'cgroup v1 controllers not writable' : 'cgroups turned off'})`,
  ].join('; ');

  return {
    kind: 'bwrap',
    isolation,
    cgroups: limited,
    egress: true,
    sharedFolders: sharedRoot !== undefined,
    skills: 'bound',
    nodeDir: layout.nodeDir,
    apiUrlInside: loopbackApiUrl,
    sandboxEnv: (_workspaceDir, env, size) => isolatedSandboxEnv(env, size, options.harnessDir !== undefined),
    async create(spec: SandboxSpec): Promise<SandboxProcess> {
      // The id names the sandbox's cgroups, so it must be one plain path segment.
      if (!/^[A-Za-z0-9_.-]{1,200}$/.test(spec.id) || spec.id.startsWith('.')) {
        throw new Error(`invalid sandbox id: ${spec.id}`);
      }
      // Its workspace's uid (the caller made the workspace, owned by it); nothing is chowned here.
      const sandboxUid = uid === undefined ? undefined : (spec.uid ?? uid);
      const user = sandboxUid === undefined ? [] : await sandboxUserArgs(usersDir, sandboxUid);
      const { launcher, cgroup, shared } = await standby.take();
      try {
        await cgroup?.rename(spec.id);
        await cgroup?.applyLimits(sandboxLimits[spec.size]);
        launcher.start(
          [
            ...bwrapArgs({
              env: isolatedSupervisorEnv(),
              workspaceDir: spec.workspaceDir,
              etcDir: etc,
              code,
              apiSocket: spec.apiSocket,
              egressSocket: spec.egressSocket,
              sharedDir: shared?.path,
              skills: spec.skills,
            }),
            ...user,
          ],
          sandboxUid,
        );
      } catch (error) {
        await discardLauncher(launcher.child.pid);
        await cgroup?.destroy();
        await shared?.release();
        throw error;
      }
      const booted = startChildSandbox({
        id: spec.id,
        child: launcher.child,
        bootTimeoutMs,
        onStderr: spec.onStderr,
        cleanup: async () => {
          await cgroup?.destroy();
          await shared?.release();
        },
        setFrozen: cgroup && ((frozen) => cgroup.setFrozen(frozen)),
        attachShared:
          shared &&
          (async (hostDir) => {
            await mkdir(hostDir, { recursive: true });
            // The team's threads run as uids of their own: each adds files and keeps them its own,
            // as in /tmp (root's, sticky, writable by all; only the team's sandboxes mount it).
            if (sandboxUid !== undefined) {
              await chown(hostDir, 0, 0);
              await chmod(hostDir, 0o1777);
            }
            await shared.attach(hostDir);
          }),
      });
      void booted.finally(() => standby.refill()).catch(() => {});
      return booted;
    },
    async close() {
      await standby.close();
      // Sandboxes still running keep their own copies of the views and shared folders (and their
      // groups: the next start on this state dir ends them). A staging point whose release a
      // shutdown overtook goes too, so the data dir holds no mount once the server stopped.
      await views.release();
      if (sharedRoot) await releaseLeftoverMounts(sharedRoot);
      if (cgroupConfig && limited && ownGroups) await removeOwnParent(cgroupConfig);
    },
  };
}

async function discardLauncher(pid: number | undefined): Promise<void> {
  try {
    if (pid !== undefined) process.kill(-pid, 'SIGKILL');
  } catch {}
}
