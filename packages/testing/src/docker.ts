import { type ChildProcess, spawn } from 'node:child_process';
import { access, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { baseImagePackages, buildRootfsTarball, DockerEngine, importBaseImage } from '@paddock/sandbox';

/** A dockerd of the test's own: its socket, data and exec roots in a temporary directory. */
export interface TestDockerd {
  dockerHost: string;
  engine: DockerEngine;
  storageDriver: string;
  close(): Promise<void>;
}

const dockerdPath = '/usr/sbin/dockerd';
const readyTimeoutMs = 60_000;

/**
 * Starts Debian's dockerd on a socket of its own (no iptables, no bridge: sandboxes have no network
 * anyway), with overlay2, else vfs where overlay mounts do not work. Answers why not when it cannot
 * run here at all (not root, not installed, or both drivers fail), for the test to say so and skip.
 */
export async function startTestDockerd(): Promise<TestDockerd | { unavailable: string }> {
  if (process.getuid?.() !== 0) return { unavailable: 'dockerd needs root and the tests do not run as root' };
  if (!(await exists(dockerdPath))) {
    return { unavailable: `${dockerdPath} is not installed (apt-get install docker.io)` };
  }
  const failures: string[] = [];
  for (const storageDriver of ['overlay2', 'vfs']) {
    const started = await startDockerd(storageDriver);
    if ('dockerHost' in started) return started;
    failures.push(`${storageDriver}: ${started.unavailable}`);
  }
  return { unavailable: `dockerd does not start here (${failures.join('; ')})` };
}

async function startDockerd(storageDriver: string): Promise<TestDockerd | { unavailable: string }> {
  // Short: containerd's socket lives under the exec root, and unix socket paths are limited to 108 bytes.
  const dir = await mkdtemp(join('/tmp', 'pdk-dockerd-'));
  const dockerHost = `unix://${dir}/docker.sock`;
  const log = join(dir, 'dockerd.log');
  const child = spawn(
    'sh',
    [
      '-c',
      'exec "$@" >"$LOG" 2>&1',
      'dockerd',
      dockerdPath,
      '--host',
      dockerHost,
      '--data-root',
      join(dir, 'data'),
      '--exec-root',
      join(dir, 'exec'),
      '--pidfile',
      join(dir, 'dockerd.pid'),
      '--iptables=false',
      '--ip6tables=false',
      '--bridge=none',
      '--storage-driver',
      storageDriver,
    ],
    {
      stdio: 'ignore',
      env: { PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', LOG: log },
    },
  );
  const engine = new DockerEngine(dockerHost);
  const close = () => stopDockerd(child, dir);
  const until = Date.now() + readyTimeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const tail = (await readFile(log, 'utf8').catch(() => '')).trim().split('\n').slice(-3).join(' | ');
      await close();
      return { unavailable: `dockerd exited (${child.exitCode ?? child.signalCode}): ${tail}` };
    }
    try {
      await engine.ping(1_000);
      break;
    } catch {}
    if (Date.now() > until) {
      await close();
      return { unavailable: `dockerd did not answer in ${readyTimeoutMs} ms` };
    }
    await sleep(200);
  }
  return { dockerHost, engine, storageDriver, close };
}

async function stopDockerd(child: ChildProcess, dir: string): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    const late = setTimeout(() => child.kill('SIGKILL'), 20_000);
    await exited;
    clearTimeout(late);
  }
  await rm(dir, { recursive: true, force: true }).catch(() => {});
}

/** Where the root filesystem tarball is kept between runs, so only the first run debootstraps. */
export function testRootfsCache(): string {
  const dir = process.getuid?.() === 0 ? '/var/cache/paddock-test' : join(tmpdir(), 'paddock-test-cache');
  // Named by what is in it, so a cached tarball of another package set is never reused.
  return join(dir, `bookworm-minbase-${baseImagePackages.join('+')}.tar`);
}

/**
 * Makes the base image on the engine the way `npm run docker-image` does: debootstrap (once; the
 * tarball is cached, see `testRootfsCache`) and `docker import`.
 */
export async function ensureTestImage(engine: DockerEngine, image: string): Promise<void> {
  if (await engine.imageExists(image)) return;
  const tarPath = testRootfsCache();
  if (!(await exists(tarPath))) await buildRootfsTarball(tarPath);
  await importBaseImage(engine, image, tarPath);
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
