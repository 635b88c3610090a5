import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { tool, zodSchema } from 'ai';
import { z } from 'zod';
import { resolveReadablePath } from './skill-paths.ts';
import type { ToolContext } from './tool-context.ts';

const maxEntries = 1000;

export interface ListEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

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
      const dir = await resolveReadablePath(ctx, path);
      const dirents = (await readdir(dir, { withFileTypes: true })).sort((a, b) =>
        a.name.localeCompare(b.name),
      );
      const entries = await Promise.all(
        dirents.slice(0, maxEntries).map(async (dirent): Promise<ListEntry> => {
          const type = dirent.isFile()
            ? 'file'
            : dirent.isDirectory()
              ? 'directory'
              : dirent.isSymbolicLink()
                ? 'symlink'
                : 'other';
          const { size } = await lstat(join(dir, dirent.name));
          return { name: dirent.name, type, size };
        }),
      );
      return dirents.length > maxEntries ? { entries, truncated: true, total: dirents.length } : { entries };
    },
  });
}
