import { realpathSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const sourceDir = dirname(fileURLToPath(import.meta.url));
const projectRoot = resolve(sourceDir, '..', '..', '..');

/** The supervisor's entry file on the host (the process provider runs it there). */
export const supervisorMain = join(sourceDir, 'supervisor', 'main.ts');

/** Where a sandbox sees Paddock's code: a neutral path, never the host's checkout. */
export const sandboxCodeRoot = '/opt/paddock';

/** A host directory shown read-only inside a sandbox at `inside`. */
export interface CodeDir {
  host: string;
  inside: string;
}

export interface CodeLayout {
  dirs: CodeDir[];
  /** The Node binary, as the sandbox names it. */
  node: string;
  /** The supervisor's entry file, as the sandbox names it. */
  supervisor: string;
}

/**
 * What a sandbox needs to run the supervisor and import `@paddock/harness`: the project's packages/
 * and node_modules/ side by side under /opt/paddock (never the project root, where the data dir with
 * the database and keys may live; the workspace packages are relative links in node_modules, so they
 * resolve there too), and the Node binary: inside node_modules (the project's pinned one) or /usr it
 * is there already; elsewhere its directory is shown at /opt/paddock/node.
 */
export function sandboxCodeLayout(nodePath: string, root: string = projectRoot): CodeLayout {
  const dirs: CodeDir[] = [
    { host: join(root, 'packages'), inside: `${sandboxCodeRoot}/packages` },
    { host: join(root, 'node_modules'), inside: `${sandboxCodeRoot}/node_modules` },
  ];
  const node = realpathSync(nodePath);
  const supervisor =
    insidePath(dirs, supervisorMain) ?? `${sandboxCodeRoot}/packages/sandbox/src/supervisor/main.ts`;
  const nodeInside = insidePath(dirs, node) ?? (isUnder('/usr', node) ? node : undefined);
  if (nodeInside) return { dirs, node: nodeInside, supervisor };
  dirs.push({ host: dirname(node), inside: `${sandboxCodeRoot}/node` });
  return { dirs, node: `${sandboxCodeRoot}/node/${basename(node)}`, supervisor };
}

function insidePath(dirs: CodeDir[], hostPath: string): string | undefined {
  const dir = dirs.find((each) => isUnder(each.host, hostPath));
  return dir && join(dir.inside, relative(dir.host, hostPath));
}

function isUnder(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel !== '' && rel !== '..' && !rel.startsWith(`..${sep}`) && !rel.startsWith(sep);
}
