import { readFile } from 'node:fs/promises';
import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import { resolveReadablePath } from './skill-paths.ts';
import type { ToolContext } from './tool-context.ts';

const defaultLineLimit = 2000;
const maxChars = 200_000;

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
      const file = await resolveReadablePath(ctx, path);
      const lines = (await readFile(file, 'utf8')).split('\n');
      const selected = lines.slice(offset - 1, offset - 1 + limit);
      let text = selected.join('\n');
      if (text.length > maxChars) text = `${text.slice(0, maxChars)}\n[cut at ${maxChars} characters]`;
      const last = offset - 1 + selected.length;
      if (offset > 1 || last < lines.length) {
        text += `\n[lines ${offset}-${last} of ${lines.length}; pass offset to read further]`;
      }
      return text;
    },
  });
}
