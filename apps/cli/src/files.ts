/** `paddock files ls|tree|get|put`: a thread's workspace. */
import { stat, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { PaddockClient } from '@paddock/sdk';
import { defaultUploadStoragePath, fileUrlStorage, uploadLocalFile } from '@paddock/sdk/node';
import type { Command } from 'commander';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

type FileTreeNode = Awaited<ReturnType<PaddockClient['files']['tree']>>;

/** Bytes per upload request: the most an interrupted upload sends again. */
export const defaultChunkSize = 8 * 1024 * 1024;

const sizeText = (bytes: number) =>
  bytes < 1024
    ? `${bytes} B`
    : bytes < 1024 ** 2
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : bytes < 1024 ** 3
        ? `${(bytes / 1024 ** 2).toFixed(1)} MiB`
        : `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

async function ls(ctx: Context, threadId: string, path: string | undefined): Promise<number> {
  const list = await ctx.client().files.list(threadId, { path });
  ctx.out.result(list, () => {
    const c = ctx.out.out;
    ctx.out.table(
      ['mode', 'size', 'modified', 'name'],
      list.items.map((item) => [
        item.mode,
        item.is_dir ? '-' : sizeText(item.size),
        item.mod_time.slice(0, 19).replace('T', ' '),
        item.is_dir ? c.blue(`${item.name}/`) : item.name,
      ]),
    );
  });
  return exitCodes.ok;
}

async function tree(
  ctx: Context,
  threadId: string,
  path: string | undefined,
  depth?: string,
): Promise<number> {
  const maxDepth = depth === undefined ? undefined : Number(depth);
  if (maxDepth !== undefined && !Number.isInteger(maxDepth))
    throw new CliError('--depth must be an integer', exitCodes.usage);
  const root = await ctx.client().files.tree(threadId, { path, max_depth: maxDepth });
  ctx.out.result(root, () => {
    const c = ctx.out.out;
    const name = (node: FileTreeNode) => (node.is_dir ? c.blue(`${node.name}/`) : node.name);
    const walk = (node: FileTreeNode, prefix: string) => {
      node.children.forEach((child, i) => {
        const last = i === node.children.length - 1;
        const size = child.is_dir ? '' : c.dim(` ${sizeText(child.size)}`);
        ctx.out.line(`${prefix}${last ? '└── ' : '├── '}${name(child)}${size}`);
        if (child.is_dir) walk(child, `${prefix}${last ? '    ' : '│   '}`);
      });
    };
    ctx.out.line(root.path === '.' || root.path === '' ? '.' : name(root));
    walk(root, '');
    if (root.truncated) ctx.out.line(c.dim('… (more entries left out: --depth, or a narrower path)'));
  });
  return exitCodes.ok;
}

async function get(ctx: Context, threadId: string, path: string, local: string | undefined): Promise<number> {
  const bytes = await ctx.client().files.read(threadId, path, { signal: ctx.signal });
  const target = local ?? basename(path);
  if (target === '-') {
    if (ctx.out.json) throw new CliError('--json writes a document on stdout: give a local file, not -', 2);
    process.stdout.write(bytes);
    return exitCodes.ok;
  }
  await writeFile(target, bytes);
  ctx.out.result({ path, local: target, size_bytes: bytes.byteLength }, () =>
    ctx.out.note(`${path} → ${target} (${sizeText(bytes.byteLength)})`),
  );
  return exitCodes.ok;
}

async function put(
  ctx: Context,
  threadId: string,
  local: string,
  path: string | undefined,
  opts: { chunkSize?: string },
): Promise<number> {
  const chunkSize = opts.chunkSize === undefined ? defaultChunkSize : Number(opts.chunkSize);
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new CliError('--chunk-size must be a positive integer (bytes)', exitCodes.usage);
  let size: number;
  try {
    const info = await stat(local);
    if (!info.isFile()) throw new Error('not a file');
    size = info.size;
  } catch (error) {
    throw new CliError(`cannot upload ${local}: ${(error as Error).message}`, exitCodes.usage);
  }
  const target = path ?? basename(local);
  const progress = ctx.out.progress(`${basename(local)} → ${target}`, size, chunkSize);
  try {
    const transfer = await uploadLocalFile(ctx.client(), threadId, local, {
      path: target,
      chunkSize,
      // Unfinished uploads are kept on disk: the next `files put` of the same file resumes the transfer.
      urlStorage: fileUrlStorage(defaultUploadStoragePath(ctx.env.XDG_CONFIG_HOME)),
      signal: ctx.signal,
      onProgress: (sent) => progress.update(sent),
    });
    progress.update(size);
    progress.stop();
    ctx.out.result(transfer, () =>
      ctx.out.line(`uploaded ${transfer.path} (${sizeText(transfer.size_bytes)})`),
    );
    return exitCodes.ok;
  } catch (error) {
    progress.stop();
    if (ctx.signal.aborted) {
      ctx.out.note('stopped: the same `paddock files put` resumes the upload where it stands');
      return 130;
    }
    throw error;
  }
}

export function fileCommands(program: Command, context: () => Context): void {
  const files = program.command('files').description("a thread's workspace files");
  files
    .command('ls')
    .description('list a directory of the workspace')
    .argument('<thread>', 'the thread id')
    .argument('[path]', 'a directory, relative to /workspace')
    .action(async (threadId: string, path?: string) => context().exit(await ls(context(), threadId, path)));
  files
    .command('tree')
    .description('the workspace as a tree')
    .argument('<thread>', 'the thread id')
    .argument('[path]', 'a directory, relative to /workspace')
    .option('--depth <n>', 'how deep to go')
    .action(async (threadId: string, path: string | undefined, opts: { depth?: string }) =>
      context().exit(await tree(context(), threadId, path, opts.depth)),
    );
  files
    .command('get')
    .description('download a file (to stdout with -)')
    .argument('<thread>', 'the thread id')
    .argument('<path>', 'the file, relative to /workspace')
    .argument('[local]', 'where to write it (default: its name here; - for stdout)')
    .action(async (threadId: string, path: string, local?: string) =>
      context().exit(await get(context(), threadId, path, local)),
    );
  files
    .command('put')
    .description('upload a file (resumes an interrupted upload of the same file, even after a kill)')
    .argument('<thread>', 'the thread id')
    .argument('<local>', 'the local file')
    .argument('[path]', 'where it lands, relative to /workspace (default: its name)')
    .option('--chunk-size <bytes>', `bytes per request (default ${defaultChunkSize})`)
    .action(async (threadId: string, local: string, path: string | undefined, opts: { chunkSize?: string }) =>
      context().exit(await put(context(), threadId, local, path, opts)),
    );
}
