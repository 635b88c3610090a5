/** What every built-in tool acts within: the workspace, the environment of its processes, the turn's signal. */
export interface ToolContext {
  workspaceDir: string;
  /** The thread's skills folder (PADDOCK_SKILLS_DIR), which read and list may open too; absent without skills. */
  skillsDir?: string;
  env: Record<string, string>;
  signal: AbortSignal;
}
