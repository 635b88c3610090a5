import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import type { ToolContext } from './tool-context.ts';
import { onPath } from './workspace-path.ts';

/** The tool's input, converted to JSON Schema once per process (not at every model call). */
const writeInput = zodSchema(
  z.object({
    path: z.string().min(1).describe('Path relative to the workspace.'),
    content: z.string().describe('The whole new content of the file.'),
  }),
);

export function writeTool(ctx: ToolContext) {
  return tool({
    description:
      'Create or overwrite a file in the workspace with the given content, creating parent directories.',
    inputSchema: writeInput,
    execute: async ({ path, content }) => {
      await onPath(ctx, path, true, (within) => ctx.sandbox.writeFile(within, path, content));
      return `wrote ${Buffer.byteLength(content)} bytes to ${path}`;
    },
  });
}
