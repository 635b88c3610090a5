import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildSandbox } from '../child-sandbox-process.ts';
import { type CodeDir, sandboxCodeLayout } from '../code-paths.ts';
import { harnessCodeDir } from '../harness-dir.ts';
import { sandboxLimits } from '../limits.ts';
import type { SandboxProcess, SandboxProvider, SandboxSpec } from '../provider.ts';
import { isolatedSandboxEnv, loopbackApiUrl } from '../sandbox-env.ts';
import { buildSandboxEtc } from '../sandbox-etc.ts';
import { sandboxPaths } from '../sandbox-paths.ts';
import { copySkillFolders } from '../skill-copies.ts';
import { accelKernelArgs } from './accel.ts';
import type { GuestShare } from './guest-init.ts';
import type { MicroVmHost } from './host-check.ts';
import { buildInitramfs } from './initramfs.ts';
import { qemuArgs } from './qemu-args.ts';
import { servePort } from './serve-port.ts';

export interface MicroVmProviderOptions {
  /** A host that passed `checkMicroVmHost`. */
  host: Extract<MicroVmHost, { available: true }>;
  /** Holds the staged /etc and the initramfs. */
  stateDir: string;
  /** The uid (and gid) QEMU and the guest's supervisor run as when the server is root. Default 65534. */
  sandboxUid?: number;
  nodePath?: string;
  /** From QEMU's start to the supervisor's `ready`. Default 60 s (TCG is slow). */
  bootTimeoutMs?: number;
  /** The runner's program cache (ProgramCache's root), shown read-only at /opt/paddock/harnesses. */
  harnessDir?: string;
}

const MiB = 1024 ** 2;
/** Where the guest's init links the API port for the supervisor (see guest-init.ts). */
const guestApiPort = '/run/paddock/api';
/** Where it links the egress port (see guest-init.ts). */
const guestEgressPort = '/run/paddock/egress';

/**
 * `sandbox_f`: each sandbox is a QEMU `microvm` guest with its own kernel. The guest sees the host's
 * /usr, a staged /etc, the supervisor and Node read-only over 9p, and the workspace read-write at
 * /workspace; it has no network device. The supervisor, started by the guest's init, speaks its
 * frames over a virtio-serial port, and a second port carries the API connections to the runner's
 * proxy. As root, QEMU drops to the sandbox uid once its devices are open, so files the guest
 * writes land as that uid, as in the bubblewrap sandboxes.
 */
export async function createMicroVmProvider(options: MicroVmProviderOptions): Promise<SandboxProvider> {
  const { host } = options;
  const asRoot = process.getuid?.() === 0;
  const uid = asRoot ? (options.sandboxUid ?? 65534) : (process.getuid?.() ?? 0);
  const layout = await sandboxCodeLayout(
    join(options.stateDir, 'supervisor'),
    options.nodePath ?? process.execPath,
  );
  const bootTimeoutMs = options.bootTimeoutMs ?? 60_000;
  await mkdir(options.stateDir, { recursive: true });
  const etcDir = join(options.stateDir, 'etc');
  await buildSandboxEtc(etcDir, uid);

  const staticShares: GuestShare[] = [
    { tag: 'usr', hostPath: '/usr', guestPath: '/usr', readOnly: true },
    { tag: 'etc', hostPath: etcDir, guestPath: '/etc', readOnly: true },
    ...codeShares([...layout.dirs, ...(await harnessCodeDir(options.harnessDir))]),
  ];
  const workspaceShare = (hostPath: string): GuestShare => ({
    tag: 'workspace',
    hostPath,
    guestPath: sandboxPaths.workspace,
    readOnly: false,
  });
  // The thread's skills: one read-only share per boot, a folder of the VM's holding a copy of each.
  const skillsShare = (hostPath: string): GuestShare => ({
    tag: 'skills',
    hostPath,
    guestPath: sandboxPaths.skills,
    readOnly: true,
  });
  const initramfs = join(options.stateDir, 'initramfs.img');
  await writeFile(
    initramfs,
    await buildInitramfs({
      busyboxPath: host.busyboxPath,
      modules: host.kernel.modules,
      shares: [...staticShares, workspaceShare(''), skillsShare('')],
      uid,
      command: [
        ...['/usr/bin/env', '-i', 'PATH=/usr/bin:/bin'],
        ...[...layout.command, '--api-port', guestApiPort, '--egress-port', guestEgressPort, '--own-pids'],
      ],
    }),
  );

  const kernelArgs = accelKernelArgs(host.accel);
  const accel = host.accel === 'kvm' ? 'KVM' : 'TCG software emulation (tests only)';
  const isolation = [
    `micro-VM: QEMU microvm with ${accel}, its own kernel (${host.kernel.version})`,
    "the host's /usr, a generated /etc, Paddock's supervisor and Node (at /opt/paddock) and the thread's skills (at /skills) read-only and the workspace read-write over 9p",
    "no network device: the Paddock API, and out by the thread's network policy, over virtio-serial ports",
    `S/M/L memory and vCPUs; QEMU under seccomp${asRoot ? ", as its workspace's own uid" : ''}`,
  ].join('; ');

  return {
    kind: 'microvm',
    isolation,
    egress: true,
    sharedFolders: false,
    skills: 'bound',
    nodeDir: layout.nodeDir,
    apiUrlInside: loopbackApiUrl,
    sandboxEnv: (_workspaceDir, env, size) => isolatedSandboxEnv(env, size, options.harnessDir !== undefined),
    async create(spec: SandboxSpec): Promise<SandboxProcess> {
      if (!/^[A-Za-z0-9_.-]{1,200}$/.test(spec.id) || spec.id.startsWith('.')) {
        throw new Error(`invalid sandbox id: ${spec.id}`);
      }
      if (!spec.apiSocket) throw new Error('a micro-VM needs the runner API proxy socket');
      // Its workspace's uid, for QEMU on the host and the supervisor in the guest (9p checks the
      // owner the host reports); the workspace was made owned by it, nothing is chowned here.
      const sandboxUid = asRoot ? (spec.uid ?? uid) : uid;
      // Under the system's temp dir, not the state dir: a unix socket path has at most 107 bytes.
      const vmDir = await mkdtemp(join(tmpdir(), 'paddock-vm-'));
      // A 9p share shows one host folder, and the skills' lie apart: the VM's own copy of them,
      // read-only to the guest (QEMU's `readonly=on`, mounted `ro`), gone with the VM.
      const skillsDir = join(vmDir, 'skills');
      await copySkillFolders(skillsDir, spec.skills ?? []).catch(async (error: unknown) => {
        await rm(vmDir, { recursive: true, force: true });
        throw error;
      });
      const control = await listenOnce(join(vmDir, 'control.sock'));
      const api = await listenOnce(join(vmDir, 'api.sock'));
      const egress = await listenOnce(join(vmDir, 'egress.sock'));
      const cleanup = async (): Promise<void> => {
        control.server.close();
        api.server.close();
        egress.server.close();
        await rm(vmDir, { recursive: true, force: true });
      };
      const limits = sandboxLimits[spec.size];
      const child = spawn(
        host.qemuPath,
        qemuArgs({
          accel: host.accel,
          memoryMiB: Math.round(limits.memoryBytes / MiB),
          cpus: limits.cpus,
          kernel: host.kernel.vmlinuz,
          initramfs,
          shares: [...staticShares, workspaceShare(spec.workspaceDir), skillsShare(skillsDir)],
          controlSocket: control.path,
          apiSocket: api.path,
          egressSocket: egress.path,
          kernelArgs: [...kernelArgs, `paddock.uid=${sandboxUid}`],
          runAs: asRoot ? sandboxUid : undefined,
        }),
        { stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { PATH: '/usr/bin:/bin' } },
      );
      // QEMU connects to both sockets before the guest runs a single instruction.
      const connected = Promise.all([control.connection, api.connection, egress.connection]);
      const exited = new Promise<never>((_, reject) => {
        child.stderr.setEncoding('utf8');
        let said = '';
        const collect = (text: string): void => {
          said = (said + text).slice(-2000);
        };
        child.stderr.on('data', collect);
        child.once('error', reject);
        child.once('exit', (code) =>
          reject(new Error(`QEMU exited (${code}) before the guest started: ${said.trim()}`)),
        );
        void connected.finally(() => child.stderr.off('data', collect));
      });
      let sockets: [Socket, Socket, Socket];
      try {
        sockets = await Promise.race([connected, exited]);
      } catch (error) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {}
        await cleanup();
        throw error;
      }
      exited.catch(() => {});
      const [controlSocket, apiSocket, egressPort] = sockets;
      servePort(apiSocket, spec.apiSocket);
      // Without an egress proxy (no settings), its streams go nowhere: the guest reaches nothing.
      if (spec.egressSocket) servePort(egressPort, spec.egressSocket);
      return startChildSandbox({
        id: spec.id,
        child,
        channel: { input: controlSocket, output: controlSocket },
        bootTimeoutMs,
        onStderr: spec.onStderr,
        cleanup: async () => {
          controlSocket.destroy();
          apiSocket.destroy();
          egressPort.destroy();
          await cleanup();
        },
      });
    },
    close: async () => {},
  };
}

/** One read-only share per code directory; the guest sees 9p mounts by tag, never their host paths. */
function codeShares(dirs: CodeDir[]): GuestShare[] {
  return dirs.map((dir, i) => ({
    tag: `code${i}`,
    hostPath: dir.host,
    guestPath: dir.inside,
    readOnly: true,
  }));
}

/** A unix socket that takes exactly one connection (QEMU's), then stops listening. */
async function listenOnce(
  path: string,
): Promise<{ path: string; server: Server; connection: Promise<Socket> }> {
  await rm(path, { force: true });
  const server = createServer({ allowHalfOpen: false });
  const connection = new Promise<Socket>((resolve) => {
    server.once('connection', (socket) => {
      server.close();
      resolve(socket);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  return { path, server, connection };
}
