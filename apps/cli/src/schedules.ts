/** `paddock schedule list|add|remove`: an agent's schedules (each due time starts a thread). */
import type { Command } from 'commander';
import { refuseOnLegacy } from './config.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

const when = (timestamp: string | null) =>
  timestamp ? `${timestamp.slice(0, 16).replace('T', ' ')} UTC` : '-';

async function list(ctx: Context, agentId: string): Promise<number> {
  const { items } = await ctx.client().cli.agents.schedules(agentId);
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no schedules');
    ctx.out.table(
      ['id', 'name', 'cron', 'time zone', 'enabled', 'next run', 'last run', 'input'],
      items.map((s) => [
        s.id,
        s.name,
        s.cron,
        s.time_zone,
        s.enabled ? 'yes' : 'no',
        s.enabled ? when(s.next_run_at) : '-',
        when(s.last_run_at),
        s.input.length > 40 ? `${s.input.slice(0, 39)}…` : s.input,
      ]),
    );
  });
  return exitCodes.ok;
}

interface AddOptions {
  cron: string;
  timeZone?: string;
  name?: string;
  disabled?: boolean;
}

async function add(ctx: Context, agentId: string, input: string, opts: AddOptions): Promise<number> {
  refuseOnLegacy(ctx.endpoints(), 'schedule_trigger');
  const schedule = await ctx.client().cli.agents.addSchedule(agentId, {
    cron: opts.cron,
    input,
    ...(opts.timeZone !== undefined && { time_zone: opts.timeZone }),
    ...(opts.name !== undefined && { name: opts.name }),
    ...(opts.disabled && { enabled: false }),
  });
  ctx.out.result(schedule, () =>
    ctx.out.line(
      `added schedule ${schedule.name} (${schedule.id}): ${schedule.cron} in ${schedule.time_zone}` +
        (schedule.enabled ? `, next at ${when(schedule.next_run_at)}` : ', disabled'),
    ),
  );
  return exitCodes.ok;
}

/** Removes by id, or by name (looked up first). */
async function remove(ctx: Context, agentId: string, schedule: string): Promise<number> {
  refuseOnLegacy(ctx.endpoints(), 'schedule_trigger');
  const { agents } = ctx.client().cli;
  const { items } = await agents.schedules(agentId);
  const found = items.find((s) => s.id === schedule || s.name === schedule);
  if (!found) throw new CliError(`the agent has no schedule ${schedule}`, exitCodes.failed);
  await agents.removeSchedule(agentId, found.id);
  ctx.out.result({ removed: found.id, name: found.name }, () =>
    ctx.out.line(`removed schedule ${found.name} (${found.id})`),
  );
  return exitCodes.ok;
}

export function scheduleCommands(program: Command, context: () => Context): void {
  const schedule = program
    .command('schedule')
    .description("an agent's schedules: each due time of a cron expression starts a thread");
  schedule
    .command('list')
    .description("list an agent's schedules")
    .argument('<agent>', 'the agent id')
    .action(async (agentId: string) => context().exit(await list(context(), agentId)));
  schedule
    .command('add')
    .description('add a schedule that sends <input> to a new thread at each due time')
    .argument('<agent>', 'the agent id')
    .argument('<input>', 'the message each thread starts with')
    .requiredOption('--cron <expression>', 'five fields (minute hour day month weekday) or @daily, @hourly…')
    .option('--time-zone <zone>', 'the IANA time zone the expression is read in (default UTC)')
    .option('--name <name>', 'its name (default schedule-<n>)')
    .option('--disabled', 'add it switched off')
    .action(async (agentId: string, input: string, opts: AddOptions) =>
      context().exit(await add(context(), agentId, input, opts)),
    );
  schedule
    .command('remove')
    .description('remove a schedule')
    .argument('<agent>', 'the agent id')
    .argument('<schedule>', "the schedule's id or name")
    .action(async (agentId: string, name: string) => context().exit(await remove(context(), agentId, name)));
}
