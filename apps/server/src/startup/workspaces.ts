import { join } from 'node:path';
import { releaseVolumesUnder, Workspaces } from '@paddock/sandbox';
import type { Config } from './config.ts';

/**
 * The one maker of thread workspaces in this process (uploads, and the runners it hosts), with the
 * deployment's uid range and quotas. Only root can give a workspace an owner or a volume: otherwise
 * workspaces are plain directories of the server's user, without a quota.
 */
export async function openWorkspaces(config: Config): Promise<Workspaces> {
  const asRoot = process.getuid?.() === 0;
  const dir = join(config.dataDir, 'workspaces');
  // Volumes a killed process left mounted: mounted again when next needed, by this process.
  if (asRoot) await releaseVolumesUnder(dir);
  return new Workspaces({
    stateDir: join(config.dataDir, 'workspace-state'),
    uids: asRoot
      ? { base: config.PADDOCK_SANDBOX_UID_BASE, count: config.PADDOCK_SANDBOX_UID_COUNT }
      : undefined,
    quotas: asRoot
      ? {
          S: config.PADDOCK_WORKSPACE_QUOTA_S,
          M: config.PADDOCK_WORKSPACE_QUOTA_M,
          L: config.PADDOCK_WORKSPACE_QUOTA_L,
        }
      : undefined,
  });
}
