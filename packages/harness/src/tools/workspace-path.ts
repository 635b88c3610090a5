import path from 'node:path';
import type { ToolContext } from './tool-context.ts';

/**
 * A requested path that leaves the workspace (or cannot be judged safely); other errors are the
 * filesystem's. Its name stays `Error`: the model reads tool failures as `Error: <message>`.
 */
export class WorkspacePathError extends Error {}

/** The directory a tool's path must stay in: the skills folder for an absolute path under it, else the workspace. */
export function rootOf(
  ctx: ToolContext,
  requested: string,
  writing: boolean,
): { within: string; name: string } {
  const skills = ctx.skillsDir;
  if (
    !writing &&
    skills &&
    path.isAbsolute(requested) &&
    isWithin(path.resolve(skills), path.resolve(requested))
  )
    return { within: skills, name: 'skills folder' };
  return { within: ctx.workspaceDir, name: 'workspace' };
}

/**
 * Runs a file operation in the sandbox on a tool's path: the supervisor resolves it there, as the
 * sandbox's user, and refuses a path that leaves its directory (by `..`, an absolute path elsewhere
 * or a link), which the model reads as this error.
 */
export async function onPath<T>(
  ctx: ToolContext,
  requested: string,
  writing: boolean,
  operation: (within: string) => Promise<T>,
): Promise<T> {
  const root = rootOf(ctx, requested, writing);
  try {
    return await operation(root.within);
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'path_refused') throw error;
    throw new WorkspacePathError(
      `path is outside the ${root.name}: ${requested} (${(error as Error).message})`,
    );
  }
}

/** Whether `candidate` is `root` or lies below it (both absolute and normalized). */
export function isWithin(root: string, candidate: string): boolean {
  const relative = path.relative(root, candidate);
  return (
    relative === '' ||
    (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
  );
}
