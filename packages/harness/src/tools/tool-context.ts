/** What every built-in tool acts within: the workspace, the environment of its processes, the turn's signal. */
export interface ToolContext {
  workspaceDir: string;
  env: Record<string, string>;
  signal: AbortSignal;
}
