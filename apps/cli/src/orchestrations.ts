/**
 * `paddock orchestration list|get|create|update` (creation refused before sending on the legacy
 * control plane) and `paddock eval list|run|runs` (an agent's evals and their verdicts).
 */
import { readFile } from 'node:fs/promises';
import type { PaddockClient } from '@paddock/sdk';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { refuseOnLegacy } from './config.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';
import { resolveTeam, type TeamFlags, withTeamFlags } from './teams.ts';

type Orchestration = Awaited<ReturnType<PaddockClient['cli']['orchestrations']['get']>>;

interface GraphFlags {
  file?: string;
  name?: string;
  member?: string[];
  edge?: string[];
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

/** `--file` (YAML or JSON: name, members, edges) with `--name`, `--member` and `--edge` over it. */
async function graphOf(opts: GraphFlags): Promise<Record<string, unknown>> {
  let body: Record<string, unknown> = {};
  if (opts.file) {
    const doc: unknown = parse(
      await readFile(opts.file, 'utf8').catch((error: Error) => {
        throw new CliError(`cannot read ${opts.file}: ${error.message}`, exitCodes.usage);
      }),
    );
    if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
      throw new CliError(`${opts.file} is not a mapping`, exitCodes.usage);
    const { name, members, edges } = doc as Record<string, unknown>;
    body = Object.fromEntries(Object.entries({ name, members, edges }).filter(([, v]) => v !== undefined));
  }
  if (opts.name !== undefined) body.name = opts.name;
  if (opts.member)
    body.members = opts.member.map((m) => {
      const [agentId, ...role] = m.split(':');
      return { agent_id: agentId, ...(role.length && { role: role.join(':') }) };
    });
  if (opts.edge)
    body.edges = opts.edge.map((e) => {
      const [from, to, ...rest] = e.split(':');
      if (!from || !to || rest.length)
        throw new CliError(`an edge is <from>:<to>, not ${e}`, exitCodes.usage);
      return { from, to };
    });
  return body;
}

function show(ctx: Context, o: Orchestration): void {
  ctx.out.line(`${o.name} (${o.id}), team ${o.team_id}, revision ${o.revision}`);
  for (const m of o.members) ctx.out.line(`  member ${m.agent_id}${m.role ? ` as ${m.role}` : ''}`);
  for (const e of o.edges) ctx.out.line(`  ${e.from} → ${e.to}`);
}

async function list(ctx: Context, opts: TeamFlags): Promise<number> {
  const { orgId, teamId } = await resolveTeam(ctx, opts);
  const { items } = await ctx.client().cli.orchestrations.list(orgId, teamId);
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no orchestrations');
    ctx.out.table(
      ['id', 'name', 'members', 'edges', 'revision', 'updated'],
      items.map((o) => [o.id, o.name, o.members.length, o.edges.length, o.revision, o.updated_at]),
    );
  });
  return exitCodes.ok;
}

async function get(ctx: Context, id: string): Promise<number> {
  const o = await ctx.client().cli.orchestrations.get(id);
  ctx.out.result(o, () => show(ctx, o));
  return exitCodes.ok;
}

async function create(ctx: Context, opts: GraphFlags & TeamFlags): Promise<number> {
  refuseOnLegacy(ctx.endpoints(), 'orchestration_create');
  const body = await graphOf(opts);
  if (typeof body.name !== 'string') throw new CliError('an orchestration needs --name', exitCodes.usage);
  const { teamId } = await resolveTeam(ctx, opts);
  const o = await ctx.client().cli.orchestrations.create({ ...body, team_id: teamId, name: body.name });
  ctx.out.result(o, () => show(ctx, o));
  return exitCodes.ok;
}

async function update(ctx: Context, id: string, opts: GraphFlags & { baseRevision?: string }) {
  const body = await graphOf(opts);
  if (Object.keys(body).length === 0)
    throw new CliError('nothing to update: pass --file, --name, --member or --edge', exitCodes.usage);
  const o = await ctx.client().cli.orchestrations.update(id, {
    ...body,
    ...(opts.baseRevision !== undefined && { base_revision: opts.baseRevision }),
  });
  ctx.out.result(o, () => show(ctx, o));
  return exitCodes.ok;
}

async function evals(ctx: Context, agentId: string, opts: { archived?: boolean }): Promise<number> {
  const { items } = await ctx.client().cli.agents.evals(agentId, { include_archived: opts.archived });
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no evals');
    ctx.out.table(
      ['id', 'name', 'status', 'files', 'updated'],
      items.map((e) => [e.id, e.name, e.status, e.files.length, e.updated_at]),
    );
  });
  return exitCodes.ok;
}

type EvalRuns = Awaited<ReturnType<PaddockClient['cli']['agents']['evalRuns']>>['items'];
const verdict = (r: EvalRuns[number]) => (r.passed === null ? '-' : r.passed ? 'pass' : 'fail');
function showRuns(ctx: Context, items: EvalRuns): void {
  if (items.length === 0) {
    ctx.out.line('no eval runs');
    return;
  }
  ctx.out.table(
    ['id', 'eval', 'task', 'status', 'verdict', 'reason'],
    items.map((r) => [r.id, r.eval_name, r.task_id, r.status, verdict(r), r.reason ?? '']),
  );
}

async function startRuns(
  ctx: Context,
  agentId: string,
  opts: { task: string; eval?: string[]; judgeModel?: string },
) {
  const { items } = await ctx.client().cli.agents.startEvalRuns(agentId, {
    task_id: opts.task,
    ...(opts.eval && { eval_ids: opts.eval }),
    ...(opts.judgeModel !== undefined && { judge_model: opts.judgeModel }),
  });
  ctx.out.result({ items }, () => showRuns(ctx, items));
  return exitCodes.ok;
}

async function runs(ctx: Context, agentId: string, opts: { task?: string; limit?: string }): Promise<number> {
  const limit = opts.limit === undefined ? undefined : Number(opts.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    throw new CliError('--limit must be a positive whole number', exitCodes.usage);
  const { items } = await ctx.client().cli.agents.evalRuns(agentId, { task_id: opts.task, limit });
  ctx.out.result({ items }, () => showRuns(ctx, items));
  return exitCodes.ok;
}

const withGraphFlags = (command: Command): Command =>
  command
    .option('-f, --file <file>', 'read name, members and edges from a YAML or JSON file')
    .option('--name <name>', 'the orchestration name')
    .option('--member <agent[:role]>', 'a member agent, with its role (repeat; replaces the list)', collect)
    .option('--edge <from:to>', 'an edge between two member agents (repeat; replaces the list)', collect);

export function orchestrationCommands(program: Command, context: () => Context): void {
  const act =
    <A extends unknown[]>(fn: (ctx: Context, ...args: A) => Promise<number>) =>
    async (...args: A) =>
      context().exit(await fn(context(), ...args));
  const orch = program.command('orchestration').description("a team's orchestrations: agents and edges");
  withTeamFlags(orch.command('list').description("list a team's orchestrations")).action(act(list));
  orch
    .command('get')
    .description('show an orchestration')
    .argument('<id>', 'the orchestration id')
    .action(act(get));
  withGraphFlags(withTeamFlags(orch.command('create').description('create an orchestration'))).action(
    act(create),
  );
  withGraphFlags(orch.command('update').description('change an orchestration').argument('<id>', 'its id'))
    .option('--base-revision <revision>', 'refuse (409) when it moved since this revision')
    .action(act(update));
  const ev = program.command('eval').description("an agent's evals and their runs");
  ev.command('list')
    .description("list an agent's evals")
    .argument('<agent>', 'the agent id')
    .option('--archived', 'include archived evals')
    .action(act(evals));
  ev.command('run')
    .description("judge a task against the agent's active evals (or the named ones)")
    .argument('<agent>', 'the agent id')
    .requiredOption('--task <task>', 'the task (thread) to judge')
    .option('--eval <id>', 'an eval to run (repeat; default: every active one)', collect)
    .option('--judge-model <model>', 'the judge model (default: the deployment’s)')
    .action(act(startRuns));
  ev.command('runs')
    .description("list an agent's eval runs with their verdicts")
    .argument('<agent>', 'the agent id')
    .option('--task <task>', 'only this task’s runs')
    .option('--limit <n>', 'at most this many')
    .action(act(runs));
}
