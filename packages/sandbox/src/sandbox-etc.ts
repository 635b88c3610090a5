import { chmod, cp, mkdir, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The whole /etc a sandbox sees. Files say only what holds inside (two users, no network but
 * loopback, names from files); of the host's, only the CA certificates (for TLS clients) and the
 * Debian alternatives links into /usr (`awk`, `which`, `editor` go through them). Without
 * ld.so.cache the loader searches its built-in /usr/lib directories, which is where everything is.
 */
export const sandboxEtcEntries = [
  'alternatives',
  'group',
  'hosts',
  'mtab',
  'nsswitch.conf',
  'os-release',
  'passwd',
  'resolv.conf',
  'ssl',
];

const generated: Record<string, string> = {
  hosts: '127.0.0.1\tlocalhost sandbox\n::1\tlocalhost ip6-localhost ip6-loopback\n',
  'nsswitch.conf': ['passwd', 'group', 'shadow', 'hosts', 'networks', 'protocols', 'services']
    .map((db) => `${db}: files\n`)
    .join(''),
  // Nothing answers on loopback's port 53, so a lookup of any other name fails at once.
  'resolv.conf':
    '# The sandbox has no network but loopback: names resolve from /etc/hosts.\nnameserver 127.0.0.1\noptions attempts:1 timeout:1\n',
};

/** Builds the sandbox's /etc in `dir` (bound read-only at /etc); passwd and group name root and `uid`. */
export async function buildSandboxEtc(dir: string, uid: number): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  await mkdir(join(dir, 'ssl'), { recursive: true });
  for (const [name, text] of Object.entries(generated))
    await writeFile(join(dir, name), text, { mode: 0o644 });
  const users = ['root:x:0:0:root:/root:/usr/sbin/nologin'];
  const groups = ['root:x:0:'];
  if (uid !== 0) {
    users.push(`sandbox:x:${uid}:${uid}:Paddock sandbox:/workspace:/bin/bash`);
    groups.push(`sandbox:x:${uid}:`);
  }
  await writeFile(join(dir, 'passwd'), `${users.join('\n')}\n`, { mode: 0o644 });
  await writeFile(join(dir, 'group'), `${groups.join('\n')}\n`, { mode: 0o644 });
  await symlink('../proc/self/mounts', join(dir, 'mtab'));
  await symlink('../usr/lib/os-release', join(dir, 'os-release'));
  // The bundle and the hashed links (into /usr/share/ca-certificates) OpenSSL, git and Python read.
  await cp('/etc/ssl/certs', join(dir, 'ssl', 'certs'), { recursive: true, verbatimSymlinks: true }).catch(
    ignoreMissing,
  );
  await copyAlternatives(join(dir, 'alternatives'));
  await chmod(dir, 0o755);
}

/** The host's alternatives links that point into /usr (the only tree a sandbox sees). */
async function copyAlternatives(target: string): Promise<void> {
  await mkdir(target);
  const names = await readdir('/etc/alternatives').catch(() => []);
  for (const name of names) {
    const link = await readlink(join('/etc/alternatives', name)).catch(() => undefined);
    if (link?.startsWith('/usr/') && !link.includes('/../')) await symlink(link, join(target, name));
  }
}

function ignoreMissing(error: NodeJS.ErrnoException): void {
  if (error.code !== 'ENOENT') throw error;
}
