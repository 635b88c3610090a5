import type { SandboxHands } from '../sandbox-hands.ts';

/** What every built-in tool acts within: the sandbox, its workspace, its processes' environment, the turn's signal. */
export interface ToolContext {
  sandbox: SandboxHands;
  /** The workspace as the sandbox sees it. */
  workspaceDir: string;
  /** The thread's skills folder (PADDOCK_SKILLS_DIR), which read and list may open too; absent without skills. */
  skillsDir?: string;
  env: Record<string, string>;
  signal: AbortSignal;
}
