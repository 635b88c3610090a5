import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import { runCommand } from './run-command.ts';
import type { ToolContext } from './tool-context.ts';

const defaultTimeoutMs = 10 * 60_000;
const outputLimit = 64 * 1024;

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const shellInput = zodSchema(
  z.object({
    command: z.string().min(1).describe('The bash command line to run.'),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .optional()
      .describe('Kill the command after this long (default 10 min).'),
  }),
);

export function shellTool(ctx: ToolContext) {
  return tool({
    description:
      'Run a bash command in the workspace directory. stdout and stderr are merged; long output keeps ' +
      'only its last 64 KiB. Returns the exit code and the output.',
    inputSchema: shellInput,
    execute: ({ command, timeout_ms }) =>
      runCommand(command, {
        sandbox: ctx.sandbox,
        cwd: ctx.workspaceDir,
        env: ctx.env,
        signal: ctx.signal,
        timeoutMs: timeout_ms ?? defaultTimeoutMs,
        outputLimit,
      }),
  });
}
