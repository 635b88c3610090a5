/** `paddock threads`: the caller's threads, newest first. */
import type { ThreadPage } from '@paddock/sdk';
import type { Command } from 'commander';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

type Thread = ThreadPage['items'][number];

interface ListOptions {
  agent?: string;
  status?: Thread['status'];
  limit?: string;
  cursor?: string;
  all?: boolean;
}

const statuses: readonly string[] = ['running', 'success', 'fail', 'need_more_info', 'idle'];

async function listThreads(ctx: Context, opts: ListOptions): Promise<number> {
  const limit = opts.limit === undefined ? undefined : Number(opts.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit >= 1 && limit <= 200))
    throw new CliError('--limit must be a whole number from 1 to 200', exitCodes.usage);
  if (opts.status !== undefined && !statuses.includes(opts.status))
    throw new CliError(`--status must be one of ${statuses.join(', ')}`, exitCodes.usage);
  const items: Thread[] = [];
  let cursor = opts.cursor;
  let next: string | null;
  do {
    const page = await ctx
      .client()
      .threads.list({ agent_id: opts.agent, status: opts.status, limit, cursor }, { signal: ctx.signal });
    items.push(...page.items);
    next = page.next_cursor;
    cursor = next ?? undefined;
  } while (opts.all && next);
  ctx.out.result({ items, next_cursor: next }, () => {
    if (items.length === 0) return ctx.out.line('no threads');
    const c = ctx.out.out;
    ctx.out.table(
      ['id', 'status', 'agent', 'created', 'title'],
      items.map((t) => [
        t.id,
        t.status === 'running' ? c.yellow(t.status) : t.status === 'fail' ? c.red(t.status) : t.status,
        t.agent_id,
        t.created_at.slice(0, 19).replace('T', ' '),
        t.title.length > 50 ? `${t.title.slice(0, 49)}…` : t.title,
      ]),
    );
    if (next) ctx.out.note(ctx.out.err.dim(`more: paddock threads --cursor ${next} (or --all)`));
  });
  return exitCodes.ok;
}

export function threadListCommand(program: Command, context: () => Context): void {
  program
    .command('threads')
    .description('list your threads, newest first')
    .option('--agent <id>', "only this agent's")
    .option('--status <status>', `only these: ${statuses.join(', ')}`)
    .option('--limit <n>', 'threads a page (default 50, at most 200)')
    .option('--cursor <cursor>', 'the page after the one that printed it')
    .option('--all', 'every page')
    .action(async (opts: ListOptions) => context().exit(await listThreads(context(), opts)));
}
