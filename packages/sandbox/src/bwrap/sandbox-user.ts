import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * Binds a passwd and group naming the sandbox's own uid over the staged /etc's (which name the uid of
 * none in particular): `id -un`, `whoami` and the tools that look the user up find `sandbox`. Written
 * once per uid under `dir` and kept.
 */
export async function sandboxUserArgs(dir: string, uid: number): Promise<string[]> {
  const userDir = join(dir, String(uid));
  const files = {
    passwd: `root:x:0:0:root:/root:/usr/sbin/nologin\nsandbox:x:${uid}:${uid}:Paddock sandbox:/workspace:/bin/bash\n`,
    group: `root:x:0:\nsandbox:x:${uid}:\n`,
  };
  await mkdir(userDir, { recursive: true, mode: 0o755 });
  const args: string[] = [];
  for (const [name, text] of Object.entries(files)) {
    const path = join(userDir, name);
    if (
      !(await access(path).then(
        () => true,
        () => false,
      ))
    ) {
      // Written aside and renamed, so a sandbox booting at the same time never binds a half-written one.
      const scratch = `${path}.${randomBytes(4).toString('hex')}`;
      await writeFile(scratch, text, { mode: 0o644 });
      await rename(scratch, path);
    }
    args.push('--ro-bind', path, `/etc/${name}`);
  }
  return args;
}
