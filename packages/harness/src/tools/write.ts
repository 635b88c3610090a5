import { mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import type { ToolContext } from './tool-context.ts';
import { resolveWorkspacePath } from './workspace-path.ts';

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
      const file = await resolveWorkspacePath(ctx.workspaceDir, path);
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, content);
      return `wrote ${Buffer.byteLength(content)} bytes to ${path}`;
    },
  });
}
