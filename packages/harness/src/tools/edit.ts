import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import type { ToolContext } from './tool-context.ts';
import { onPath } from './workspace-path.ts';

/** A file larger than this is not edited whole in memory. */
const maxEditBytes = 16 * 1024 * 1024;

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const editInput = zodSchema(
  z.object({
    path: z.string().min(1).describe('Path relative to the workspace.'),
    old_string: z.string().min(1).describe('The exact text to replace, whitespace included.'),
    new_string: z.string().describe('The text to put in its place.'),
  }),
);

export function editTool(ctx: ToolContext) {
  return tool({
    description:
      'Replace one exact occurrence of old_string with new_string in a workspace file. old_string must ' +
      'occur exactly once; include surrounding lines to make it unique.',
    inputSchema: editInput,
    execute: async ({ path, old_string, new_string }) =>
      onPath(ctx, path, true, async (within) => {
        const { data, size } = await ctx.sandbox.readFile(within, path, maxEditBytes);
        if (size > data.length)
          throw new Error(`${path} is over ${maxEditBytes} bytes; edit it with the shell`);
        const text = data.toString('utf8');
        const count = text.split(old_string).length - 1;
        if (count === 0) throw new Error(`old_string was not found in ${path}`);
        if (count > 1) {
          throw new Error(
            `old_string occurs ${count} times in ${path}; include more context so it occurs once`,
          );
        }
        const at = text.indexOf(old_string);
        // Splicing by index, not String.replace, so `$&` and friends in new_string stay literal.
        await ctx.sandbox.writeFile(
          within,
          path,
          text.slice(0, at) + new_string + text.slice(at + old_string.length),
        );
        return `edited ${path}`;
      }),
  });
}
