import { type BigIntStats, constants } from 'node:fs';
import { opendir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileTreeNode } from '@paddock/protocol';
import { admitFileRead, type FileRead } from './admit-file-read.ts';
import { readEntries } from './directory-entries.ts';
import { childPath, nameOf } from './file-entry.ts';
import { entryThrough, type Located, locate, openConfined, relativeToWorkspace } from './workspace-path.ts';

/** A directory met while walking is opened only if it is one still: never through a symlink. */
const walkFlags = constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * `GET /v2/tasks/{id}/files/tree`: the workspace (or a directory of it) as a tree, breadth first and
 * sorted by name, so that when `maxEntries` cuts the walk the shallow entries are the ones kept.
 * Directories `maxDepth` levels below the root are shown without their children. The root says
 * `truncated: true` when either bound left an entry out. Symlinks are leaves: never followed.
 */
export async function fileTree({
  ctx,
  taskId,
  path,
  maxDepth,
  maxEntries,
}: FileRead & { maxDepth: number; maxEntries: number }): Promise<FileTreeNode> {
  const workspace = await admitFileRead(ctx, taskId);
  if (!workspace.exists && relativeToWorkspace(path) === '.') {
    return { name: 'workspace', path: '.', is_dir: true, size: 0, children: [], truncated: false };
  }
  const located = await locate(workspace.dir, path);
  const opened = await openConfined(workspace.dir, located);
  await opened.handle.close();
  const root: FileTreeNode = { ...treeNode(located.path, opened.stats), truncated: false };
  if (!root.is_dir) return root;

  let entries = 0;
  let level: { node: FileTreeNode; at: Located }[] = [{ node: root, at: located }];
  for (let depth = 1; level.length > 0; depth++) {
    const next: typeof level = [];
    for (const { node, at } of level) {
      const listed = await listDirectory(workspace.dir, at, at === located ? 0 : walkFlags);
      for (const [name, stats] of listed) {
        if (entries === maxEntries) {
          root.truncated = true;
          return root;
        }
        const child = treeNode(childPath(node.path, name), stats);
        node.children.push(child);
        entries++;
        if (!child.is_dir) continue;
        const childAt = { hostPath: join(at.hostPath, name), path: child.path };
        if (depth < maxDepth) next.push({ node: child, at: childAt });
        else if (!root.truncated && (await hasEntries(workspace.dir, childAt))) root.truncated = true;
      }
    }
    level = next;
  }
  return root;
}

function treeNode(path: string, stats: BigIntStats): FileTreeNode {
  return {
    name: nameOf(path),
    path,
    is_dir: stats.isDirectory(),
    size: Number(stats.size),
    children: [],
  };
}

/**
 * A directory's entries, through its confined descriptor. One that cannot be opened as a directory
 * inside the workspace any more (the sandbox replaced or removed it while we walked) reads as empty.
 */
async function listDirectory(
  workspaceDir: string,
  at: Located,
  flags: number,
): Promise<[string, BigIntStats][]> {
  const opened = await openConfined(workspaceDir, at, flags).catch(() => undefined);
  if (!opened) return [];
  try {
    return await readEntries(opened.handle);
  } finally {
    await opened.handle.close();
  }
}

/** Whether a directory at the depth bound has anything in it (reads one entry, not the whole). */
async function hasEntries(workspaceDir: string, at: Located): Promise<boolean> {
  const opened = await openConfined(workspaceDir, at, walkFlags).catch(() => undefined);
  if (!opened) return false;
  try {
    const dir = await opendir(entryThrough(opened.handle, ''));
    try {
      return (await dir.read()) !== null;
    } finally {
      await dir.close();
    }
  } finally {
    await opened.handle.close();
  }
}
