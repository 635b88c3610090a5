import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import type { ToolContext } from './tool-context.ts';
import { onPath } from './workspace-path.ts';

const defaultLineLimit = 2000;
const maxChars = 200_000;
/** What a read takes of a file at most: more than `maxChars` characters of any text. */
const maxBytes = 4 * maxChars;

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const readInput = zodSchema(
  z.object({
    path: z.string().min(1).describe('Path relative to the workspace, or absolute under the skills folder.'),
    offset: z.number().int().min(1).optional().describe('First line to read, counting from 1.'),
    limit: z
      .number()
      .int()
      .positive()
      .optional()
      .describe(`How many lines to read (default ${defaultLineLimit}).`),
  }),
);

export function readTool(ctx: ToolContext) {
  return tool({
    description:
      "Read a text file in the workspace (or a skill's, by its absolute path), optionally a range of lines.",
    inputSchema: readInput,
    execute: async ({ path, offset = 1, limit = defaultLineLimit }) => {
      const { data, size } = await onPath(ctx, path, false, (within) =>
        ctx.sandbox.readFile(within, path, maxBytes),
      );
      const lines = data.toString('utf8').split('\n');
      const selected = lines.slice(offset - 1, offset - 1 + limit);
      let text = selected.join('\n');
      if (text.length > maxChars || size > data.length)
        text = `${text.slice(0, maxChars)}\n[cut at ${Math.min(maxChars, text.length)} characters]`;
      const last = offset - 1 + selected.length;
      if (offset > 1 || last < lines.length) {
        text += `\n[lines ${offset}-${last} of ${lines.length}; pass offset to read further]`;
      }
      return text;
    },
  });
}
