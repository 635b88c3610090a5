import type { FileTreeNode } from '@paddock/protocol';
import type { Ctx } from '../context.ts';
import { admitFileRead, type FileRead, type FileServices } from './admit-file-read.ts';
import { nameOf } from './file-entry.ts';
import { accepted, type TreeWalkNode } from './workspace-files.ts';
import { pathNotFound, relativeToWorkspace } from './workspace-path.ts';

/**
 * `GET /v2/tasks/{id}/files/tree`: the workspace (or a directory of it) as a tree, breadth first and
 * sorted by name, so that when `maxEntries` cuts the walk the shallow entries are the ones kept.
 * Directories `maxDepth` levels below the root are shown without their children. The root says
 * `truncated: true` when either bound left an entry out. Symlinks are leaves: never followed.
 */
export async function fileTree(
  ctx: Ctx,
  services: FileServices,
  { taskId, path, maxDepth, maxEntries }: FileRead & { maxDepth: number; maxEntries: number },
): Promise<FileTreeNode> {
  const workspace = await admitFileRead(ctx, services, taskId);
  const relative = relativeToWorkspace(path);
  if (!workspace.exists && relative === '.') {
    return { name: 'workspace', path: '.', is_dir: true, size: 0, children: [], truncated: false };
  }
  if (!workspace.exists) throw pathNotFound(relative);
  const walked = accepted(
    await services.workspaceFiles.tree(workspace.dir, relative, { maxDepth, maxEntries }),
  );
  return { ...treeNode(walked.root), truncated: walked.truncated };
}

function treeNode(node: TreeWalkNode): FileTreeNode {
  return { name: nameOf(node.path), ...node, children: node.children.map(treeNode) };
}
