import { realpathSync } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { buildSupervisor } from './supervisor-link/build-supervisor.ts';

/** Where a sandbox sees Paddock's code: a neutral path, never the host's. */
export const sandboxCodeRoot = '/opt/paddock';

/** A host directory shown read-only inside a sandbox at `inside`. */
export interface CodeDir {
  host: string;
  inside: string;
}

export interface CodeLayout {
  dirs: CodeDir[];
  /** The supervisor's command line, as the sandbox names its files. */
  command: string[];
  /** The Node binary, as the sandbox names it. */
  node: string;
  /** Its directory, as the sandbox names it (programs on Node find it first on their PATH). */
  nodeDir: string;
  /** The supervisor's entry file, as the sandbox names it. */
  supervisor: string;
}

/**
 * What a sandbox needs to run its supervisor, and nothing else of Paddock's: the supervisor built
 * into `buildDir` (plain JavaScript, Node builtins only; see build-supervisor.ts), shown at
 * /opt/paddock/supervisor, and the Node binary, under /usr where it is there already, else its
 * directory shown at /opt/paddock/node.
 */
export async function sandboxCodeLayout(buildDir: string, nodePath: string): Promise<CodeLayout> {
  const main = await buildSupervisor(buildDir);
  const dirs: CodeDir[] = [{ host: buildDir, inside: `${sandboxCodeRoot}/supervisor` }];
  const supervisor = `${sandboxCodeRoot}/supervisor/${basename(main)}`;
  const node = nodeInSandbox(nodePath);
  if (node.startsWith(sandboxCodeRoot))
    dirs.push({ host: dirname(realpathSync(nodePath)), inside: dirname(node) });
  return {
    dirs,
    command: [node, ...supervisorNodeFlags, supervisor],
    node,
    nodeDir: dirname(node),
    supervisor,
  };
}

/**
 * Node's flags for the supervisor, the one process every idle sandbox keeps (measured with
 * bench/pss.ts: about 1 MiB PSS less than without): no JIT (its work is system calls, JSON and
 * base64, all native), a young generation of at most 1 MiB, and no threads of V8's own.
 */
export const supervisorNodeFlags = ['--jitless', '--max-semi-space-size=1', '--single-threaded'];

/** Where a sandbox sees the Node binary at `nodePath`: its own path under /usr, else in /opt/paddock/node. */
export function nodeInSandbox(nodePath: string): string {
  const node = realpathSync(nodePath);
  return isUnder('/usr', node) ? node : `${sandboxCodeRoot}/node/${basename(node)}`;
}

function isUnder(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
}
