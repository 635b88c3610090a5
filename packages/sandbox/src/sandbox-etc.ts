import { chmod, cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** What bash, python3, git and TLS clients need from the host's /etc. */
const hostEntries = [
  'hosts',
  'host.conf',
  'nsswitch.conf',
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'ssl/certs',
  'ssl/openssl.cnf',
  'ca-certificates',
  'ca-certificates.conf',
  'localtime',
  'gitconfig',
  'mime.types',
  'os-release',
  'debian_version',
  'protocols',
  'services',
];

/**
 * Builds the sandbox's /etc: a copy of a few host entries, with passwd and group naming only root and
 * the sandbox user. One bind of a staged directory costs less boot time than a bind per file, and the
 * host's user list stays out.
 */
export async function buildSandboxEtc(dir: string, uid: number): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  for (const entry of hostEntries) {
    const target = join(dir, entry);
    await mkdir(dirname(target), { recursive: true });
    await cp(join('/etc', entry), target, { recursive: true, verbatimSymlinks: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error;
      },
    );
  }
  const users = ['root:x:0:0:root:/root:/usr/sbin/nologin'];
  const groups = ['root:x:0:'];
  if (uid !== 0) {
    users.push(`sandbox:x:${uid}:${uid}:Paddock sandbox:/workspace:/bin/bash`);
    groups.push(`sandbox:x:${uid}:`);
  }
  await writeFile(join(dir, 'passwd'), `${users.join('\n')}\n`, { mode: 0o644 });
  await writeFile(join(dir, 'group'), `${groups.join('\n')}\n`, { mode: 0o644 });
  await chmod(dir, 0o755);
}
