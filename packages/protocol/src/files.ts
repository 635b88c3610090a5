import { z } from 'zod';

/**
 * A path in a task's workspace: relative to `/workspace`, or absolute under `/workspace`. Absent or
 * empty means the workspace itself.
 */
const workspacePathQuery = z.string().max(4096).optional();

/** Bounds of the file tree (D12; defaults and maximums are Paddock's, see docs/decisions.md). */
export const treeLimits = {
  maxDepth: { default: 3, max: 20 },
  maxEntries: { default: 1000, max: 10_000 },
} as const;

export const filesQuerySchema = z.strictObject({ path: workspacePathQuery });

export const fileTreeQuerySchema = z.strictObject({
  path: workspacePathQuery,
  /** Levels below the root that are listed: 1 lists the root's own entries only. */
  max_depth: z.coerce.number().int().min(1).max(treeLimits.maxDepth.max).default(treeLimits.maxDepth.default),
  /** Entries in the whole tree, the root not counted. */
  max_entries: z.coerce
    .number()
    .int()
    .min(1)
    .max(treeLimits.maxEntries.max)
    .default(treeLimits.maxEntries.default),
});

/** One file or directory of a workspace (spec: "File entry"). */
export const fileEntrySchema = z.object({
  name: z.string(),
  /** Relative to `/workspace`, `/`-separated, no leading `./`; the workspace itself is `.`. */
  path: z.string(),
  is_dir: z.boolean(),
  /** Bytes; for a symbolic link, the length of its target. */
  size: z.number().int(),
  /** D3 timestamp (microseconds, UTC, no zone suffix). */
  mod_time: z.string(),
  /** As `ls -l` shows it, type letter included: `-rw-r--r--`, `drwxr-xr-x`, `lrwxrwxrwx`. */
  mode: z.string(),
  /** The permission bits in octal, four digits: `0644`, `0755`, `1777`. */
  permissions: z.string(),
  /** User name where the host resolves it, else the numeric id. */
  owner: z.string(),
  /** Group name where the host resolves it, else the numeric id. */
  group: z.string(),
});
export type FileEntry = z.infer<typeof fileEntrySchema>;

export const fileListSchema = z.object({ path: z.string(), items: z.array(fileEntrySchema) });
export type FileList = z.infer<typeof fileListSchema>;

export interface FileTreeNode {
  name: string;
  path: string;
  is_dir: boolean;
  size: number;
  children: FileTreeNode[];
  /** On the root only: true when `max_depth` or `max_entries` left entries out. */
  truncated?: boolean;
}

/** Registered with an id: a self-referencing schema is one component of the OpenAPI document. */
export const fileTreeNodeSchema = z
  .object({
    name: z.string(),
    path: z.string(),
    is_dir: z.boolean(),
    size: z.number().int(),
    get children() {
      return z.array(fileTreeNodeSchema);
    },
    truncated: z.boolean().optional(),
  })
  .meta({ id: 'FileTreeNode' });
