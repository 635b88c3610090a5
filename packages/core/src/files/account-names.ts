import { readFile } from 'node:fs/promises';

/** How long the host's user and group names are kept before /etc/passwd and /etc/group are read again. */
const refreshMs = 60_000;

let names: { until: number; users: Map<number, string>; groups: Map<number, string> } | undefined;

/**
 * The host's name for a file's owner and group, else the numeric id as a string. Files a sandbox
 * writes belong to its thread's own uid (from `PADDOCK_SANDBOX_UID_BASE`), which the host has no name
 * for, so they show as the number; workspaces from before per-thread uids show 65534 (`nobody`).
 */
export async function accountNames(uid: number, gid: number): Promise<{ owner: string; group: string }> {
  if (!names || names.until <= Date.now()) {
    const [users, groups] = await Promise.all([readIds('/etc/passwd'), readIds('/etc/group')]);
    names = { until: Date.now() + refreshMs, users, groups };
  }
  return { owner: names.users.get(uid) ?? String(uid), group: names.groups.get(gid) ?? String(gid) };
}

/** `name:x:id:…` lines to id → name (the first name of an id wins, as getpwuid answers). */
async function readIds(file: string): Promise<Map<number, string>> {
  const ids = new Map<number, string>();
  const text = await readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const [name, , id] = line.split(':');
    if (!name || id === undefined || !/^\d+$/.test(id)) continue;
    if (!ids.has(Number(id))) ids.set(Number(id), name);
  }
  return ids;
}
