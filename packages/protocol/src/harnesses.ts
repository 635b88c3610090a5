import { z } from 'zod';

/**
 * A coding-agent program Paddock drives over the Agent Client Protocol (D9): what to install, how
 * to start it, and how to point it at the model gateway. A profile is data, so a deployment can add
 * one or remap a harness value to another ACP command without new code.
 *
 * String values in `command`, `env` and `files` may name these placeholders, filled in the sandbox
 * when the agent starts:
 * - `{{gateway_url}}`: the model gateway's base URL in the profile's dialect;
 * - `{{api_url}}`: the Paddock API as the sandbox reaches it;
 * - `{{model}}`: the agent spec's model (the gateway maps it);
 * - `{{home}}`: the agent's home, where its settings and sessions live (kept with the workspace);
 * - `{{workspace}}`: the workspace;
 * - `{{install}}`: the folder the program's packages were installed in;
 * - `{{platform}}`: the machine as npm names native packages (`linux-x64`), for a program whose
 *   package only wraps a native one: its own command is started, not the wrapper.
 * The thread's token is never written into a file: a profile names the variable that carries it
 * (`token_env`), and its settings refer to that variable where the program allows.
 */

/** Which of the gateway's dialects a program speaks (D16). */
export const gatewayDialects = ['anthropic', 'openai-responses', 'openai-chat', 'gemini'] as const;
export type GatewayDialect = (typeof gatewayDialects)[number];

/**
 * The gateway model id a thread's own caller may ask for without knowing the thread: its agent's
 * model, with the agent's instructions before the caller's system text. A program started in a
 * standby sandbox, before its thread was known, is given this as its model.
 */
export const threadAgentModelId = 'thread';

/** npm package names, scoped or not. */
const packageName = z.string().regex(/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/, 'an npm package name');
/** Exact versions only: a harness is pinned, so every runner installs the same program. */
const exactVersion = z.string().regex(/^\d+\.\d+\.\d+(-[\w.]+)?$/, 'an exact version (x.y.z)');
/** A path inside the agent's home: relative, no `..`. */
const homePath = z
  .string()
  .min(1)
  .refine((path) => !path.startsWith('/') && !path.split('/').includes('..'), 'a relative path without ..');

export const harnessProfileSchema = z.object({
  /** The program's name, for people (`Claude Code`). */
  program: z.string().min(1).max(100),
  /** The program's own version, as `GET /v2/harnesses` shows it. */
  version: z.string().min(1).max(50),
  /** What to install from the npm registry, each at an exact version. */
  packages: z
    .record(packageName, exactVersion)
    .refine((p) => Object.keys(p).length > 0, 'at least one package'),
  /**
   * The ACP agent's command line. The first word is a program the packages install (looked up in
   * the install's `node_modules/.bin`) or an absolute path.
   */
  command: z.array(z.string().min(1)).min(1),
  dialect: z.enum(gatewayDialects),
  /** The variable that carries the thread's token to the program (read by its settings). */
  token_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
  /** The program's environment on top of the sandbox's. */
  env: z.record(z.string(), z.string()).default({}),
  /** Settings files written into the agent's home before it starts (path → content). */
  files: z.record(homePath, z.string()).default({}),
  /** Where the program reads its global instructions (a file in its home): the agent's `instructions` go there. */
  instructions_file: homePath.optional(),
  /** Where the program looks for skills in its home: each of the thread's skills is linked there. */
  skills_dir: homePath.optional(),
  /**
   * For a program whose ACP agent ignores `mcpServers` (pi): the variable that also carries the
   * agent's MCP servers to it, as ACP's McpServer list in JSON, for a bridge in its settings to
   * read (an environment variable rather than a file: a url server's entry holds the thread's token).
   */
  mcp_servers_env: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
    .optional(),
  /** Choose the model with ACP's `session/set_model` after a session starts (for programs that ignore the settings). */
  set_model: z.boolean().default(false),
  /** Whether `session/load` resumes a session in a new process; without it the transcript is given as context. */
  load_session: z.boolean().default(true),
  /**
   * Started ahead in a standby sandbox, also prompt it once in a session of its own (its model calls
   * refused, as no thread is known yet): for a program whose first prompt in a process does work of
   * its own before it calls the model (OpenCode), so the thread's first prompt does not wait for it.
   */
  warm_prompt: z.boolean().default(false),
  /** Whether the program takes a message while a prompt runs (ACP has no way yet: false). */
  steering: z.boolean().default(false),
});
export type HarnessProfile = z.infer<typeof harnessProfileSchema>;
export type HarnessProfileInput = z.input<typeof harnessProfileSchema>;

/** A harness value's entry in `GET /v2/harnesses`. */
export interface HarnessListing {
  harness: string;
  program: string;
  version: string;
  /** `builtin`: Paddock's own loop; `acp`: a program driven over ACP. */
  kind: 'builtin' | 'acp';
  /** Whether this node's runner has the program installed (always true for built-in ones). */
  installed: boolean;
  dialect: GatewayDialect | null;
  abilities: { steering: boolean; resume: 'native' | 'transcript'; cancel: boolean };
}
