import { realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ToolContext } from './tool-context.ts';
import { isWithin, resolveWorkspacePath, WorkspacePathError } from './workspace-path.ts';

/**
 * A path the read and list tools may open: inside the workspace (as `resolveWorkspacePath` judges
 * it), or an absolute path under the skills folder (read-only there: no tool writes under it).
 */
export async function resolveReadablePath(ctx: ToolContext, requested: string): Promise<string> {
  const skillsDir = ctx.skillsDir;
  if (skillsDir && path.isAbsolute(requested) && isWithin(path.resolve(skillsDir), path.resolve(requested))) {
    if (requested.includes('\0'))
      throw new WorkspacePathError(`path contains a NUL byte: ${JSON.stringify(requested)}`);
    const target = path.resolve(requested);
    // A link inside a skill must not lead out of the skills folder.
    const real = await realpath(target);
    if (!isWithin(await realpath(skillsDir), real))
      throw new WorkspacePathError(`path leads outside the skills folder through a symlink: ${requested}`);
    return target;
  }
  return resolveWorkspacePath(ctx.workspaceDir, requested);
}
