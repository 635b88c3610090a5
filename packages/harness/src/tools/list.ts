import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import type { ToolContext } from './tool-context.ts';
import { onPath } from './workspace-path.ts';

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const listInput = zodSchema(
  z.object({
    path: z
      .string()
      .optional()
      .describe(
        'Directory relative to the workspace (default: the workspace itself), or absolute under the skills folder.',
      ),
  }),
);

export function listTool(ctx: ToolContext) {
  return tool({
    description: 'List a directory in the workspace: each entry with its type and size in bytes.',
    inputSchema: listInput,
    execute: async ({ path = '.' }) => {
      const { entries, total } = await onPath(ctx, path, false, (within) => ctx.sandbox.list(within, path));
      return total > entries.length ? { entries, truncated: true, total } : { entries };
    },
  });
}
