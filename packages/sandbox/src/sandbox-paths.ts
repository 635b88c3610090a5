/**
 * Paths inside every sandbox with a filesystem of its own (bubblewrap, Docker, micro-VM), as the
 * supervisor and the agent see them: fixed, so that scripts and the harness can rely on them.
 */
export const sandboxPaths = {
  workspace: '/workspace',
  /**
   * The host's API proxy socket, bound as a file at a fixed path: the sandbox sees nothing else of the
   * runner's state, and a launcher spawned before its sandbox's spec is known can name it on argv. The
   * bind holds the socket's inode, which lives as long as the runner's proxy, and so the sandbox.
   */
  apiSocket: '/run/paddock/api.sock',
  /** The sandbox's own egress proxy socket, bound the same way (see sandbox-egress.ts). */
  egressSocket: '/run/paddock/egress.sock',
  shared: '/shared',
  /** The thread's skills, each read-only at `/skills/<slug>` (PADDOCK_SKILLS_DIR). */
  skills: '/skills',
  /** The runner's cache of ACP programs, read-only (PADDOCK_HARNESS_DIR; see ProgramCache). */
  harnesses: '/opt/paddock/harnesses',
};

/** Where a skill shows in the sandbox; its slug is one plain path segment (the registry's names). */
export function skillPath(slug: string): string {
  if (!/^[\w.-]+$/.test(slug) || slug === '.' || slug === '..')
    throw new Error(`invalid skill slug: ${slug}`);
  return `${sandboxPaths.skills}/${slug}`;
}
