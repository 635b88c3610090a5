import { realpathSync } from 'node:fs';
import { basename, dirname, relative, sep } from 'node:path';
import { sandboxPaths } from './sandbox-paths.ts';
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
  /** The Node binary, as the sandbox names it (the coding-agent programs run on it). */
  node: string;
  /** Its directory, as the sandbox names it (programs on Node find it first on their PATH). */
  nodeDir: string;
  /** The supervisor's program, as the sandbox names it. */
  supervisor: string;
}

/**
 * What a sandbox needs of Paddock's, and nothing else: the supervisor built into `buildDir` (one
 * static program; see build-supervisor.ts), shown at /opt/paddock/supervisor, and the Node binary
 * the coding-agent programs run on, under /usr where it is there already, else its directory shown
 * at /opt/paddock/node.
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
    command: [supervisor],
    node,
    nodeDir: dirname(node),
    supervisor,
  };
}

/**
 * The supervisor's command line where the provider binds the runner's sockets in (bwrap, Docker):
 * its loopback doors on those sockets, and the sandbox alone in its pid namespace.
 */
export function socketDoorsCommand(layout: CodeLayout): string[] {
  return [
    ...layout.command,
    '--api-socket',
    sandboxPaths.apiSocket,
    '--egress-socket',
    sandboxPaths.egressSocket,
    '--own-pids',
  ];
}

/** Where a sandbox sees the Node binary at `nodePath`: its own path under /usr, else in /opt/paddock/node. */
export function nodeInSandbox(nodePath: string): string {
  const node = realpathSync(nodePath);
  return isUnder('/usr', node) ? node : `${sandboxCodeRoot}/node/${basename(node)}`;
}

function isUnder(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
}
