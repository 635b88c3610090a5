import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildRootfsTarball, DockerEngine, importBaseImage } from '@paddock/sandbox';
import type { Config } from '../startup/config.ts';

const usage = `usage: paddock docker-image [--rootfs FILE] [--include PKG,PKG] [--suite SUITE] [--mirror URL]
Builds sandbox_b's base image (PADDOCK_DOCKER_IMAGE) on the engine at DOCKER_HOST from a Debian root
filesystem made by debootstrap (Debian packages only, no registry pull). Needs root and debootstrap.
  --rootfs FILE   keep the root filesystem tarball here and reuse it when it exists
  --include       extra Debian packages (e.g. python3,git,ca-certificates)
  --suite         Debian suite (default bookworm)
  --mirror        Debian mirror (default debootstrap's)
`;

/** `paddock docker-image` (`npm run docker-image`): debootstrap, tar, `docker import`. */
export async function runDockerImage(config: Config, argv: string[]): Promise<void> {
  let values: { rootfs?: string; include?: string; suite?: string; mirror?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        rootfs: { type: 'string' },
        include: { type: 'string' },
        suite: { type: 'string' },
        mirror: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    process.stderr.write(`paddock docker-image: ${(error as Error).message}\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const engine = new DockerEngine(config.DOCKER_HOST);
  try {
    await engine.ping();
  } catch (error) {
    process.stderr.write(
      `paddock docker-image: no Docker engine at ${engine.name}: ${(error as Error).message}\n`,
    );
    process.exit(1);
  }
  const scratch = values.rootfs ? undefined : await mkdtemp(join(tmpdir(), 'paddock-rootfs-'));
  const tarPath = values.rootfs ?? join(scratch!, 'rootfs.tar');
  try {
    if (!(await exists(tarPath))) {
      process.stdout.write(`debootstrap ${values.suite ?? 'bookworm'} (minbase) into ${tarPath} …\n`);
      await buildRootfsTarball(tarPath, {
        suite: values.suite,
        mirror: values.mirror,
        include: values.include?.split(',').filter(Boolean),
        onProgress: (line) => process.stdout.write(`  ${line}\n`),
      });
    }
    process.stdout.write(`importing ${tarPath} as ${config.PADDOCK_DOCKER_IMAGE} on ${engine.name} …\n`);
    await importBaseImage(engine, config.PADDOCK_DOCKER_IMAGE, tarPath);
    process.stdout.write(`done: sandbox_b runs ${config.PADDOCK_DOCKER_IMAGE}\n`);
  } catch (error) {
    process.stderr.write(`paddock docker-image: ${(error as Error).message}\n`);
    process.exitCode = 1;
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
