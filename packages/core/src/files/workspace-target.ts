import { chown, mkdir } from 'node:fs/promises';
import path from 'node:path';

/**
 * A thread's workspace on the host: `<workspacesDir>/<thread_id>`, made when first needed. One this
 * makes is given to `owner` (the sandbox's uid when the server is root), since the workspace helper
 * runs as the workspace's owner and refuses root.
 */
export async function ensureWorkspaceDir(
  workspacesDir: string,
  threadId: string,
  owner?: number,
): Promise<string> {
  const dir = path.join(workspacesDir, threadId);
  await mkdir(workspacesDir, { recursive: true });
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return dir;
    throw error;
  }
  if (owner !== undefined) await chown(dir, owner, owner);
  return dir;
}
