/**
 * `paddock agent list|get|create|update`: control-plane agents, from flags or an `agent.yaml`.
 * A declarative `machine_kind` or `default_model` write is refused before sending on the legacy
 * control plane (spec, control-plane rule 10).
 */
import { readFile } from 'node:fs/promises';
import type { AgentCreateBody, AgentPutBody, PaddockClient } from '@paddock/sdk';
import type { Command } from 'commander';
import { parse } from 'yaml';
import { refuseOnLegacy } from './config.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';
import { resolveTeam, type TeamFlags, withTeamFlags } from './teams.ts';

type Agent = Awaited<ReturnType<PaddockClient['cli']['agents']['get']>>;

interface AgentFlags {
  file?: string;
  name?: string;
  tagline?: string;
  entrypoint?: string;
  model?: string;
  harness?: string;
  machineKind?: string;
  memory?: boolean;
  browser?: boolean;
  network?: string;
}

/** The fields `agent.yaml` may set, by their names there (`model` stands for `default_model`). */
const yamlFields: Record<string, string> = {
  name: 'name',
  tagline: 'tagline',
  entrypoint: 'entrypoint',
  model: 'default_model',
  default_model: 'default_model',
  harness: 'harness',
  machine_kind: 'machine_kind',
  memory_enabled: 'memory_enabled',
  browser_enabled: 'browser_enabled',
  network: 'network',
};

async function fromFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, exitCodes.usage);
  }
  const doc: unknown = parse(text);
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc))
    throw new CliError(`${file} is not a YAML mapping`, exitCodes.usage);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(doc)) if (key in yamlFields) body[yamlFields[key]!] = value;
  return body;
}

/** The agent.yaml's fields with the flags over them. */
async function bodyOf(opts: AgentFlags): Promise<Record<string, unknown>> {
  const body = opts.file ? await fromFile(opts.file) : {};
  const set = (key: string, value: unknown) => {
    if (value !== undefined) body[key] = value;
  };
  set('name', opts.name);
  set('tagline', opts.tagline);
  set('entrypoint', opts.entrypoint);
  set('default_model', opts.model);
  set('harness', opts.harness);
  set('machine_kind', opts.machineKind);
  set('memory_enabled', opts.memory);
  set('browser_enabled', opts.browser);
  set('network', opts.network);
  return body;
}

function refuseDeclarative(ctx: Context, body: Record<string, unknown>): void {
  if (body.machine_kind !== undefined) refuseOnLegacy(ctx.endpoints(), 'declarative_machine_kind');
  if (body.default_model !== undefined) refuseOnLegacy(ctx.endpoints(), 'declarative_default_model');
}

function show(ctx: Context, agent: Agent): void {
  for (const [key, value] of Object.entries(agent))
    ctx.out.line(
      `${key}: ${typeof value === 'object' && value !== null ? JSON.stringify(value) : (value ?? '-')}`,
    );
}

async function list(ctx: Context, opts: TeamFlags & { limit?: string }): Promise<number> {
  const { orgId, teamId } = await resolveTeam(ctx, opts);
  const limit = opts.limit === undefined ? undefined : Number(opts.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 0))
    throw new CliError('--limit must be a positive whole number', exitCodes.usage);
  const { items } = await ctx.client().cli.teams.agents(orgId, teamId, { limit });
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no agents');
    ctx.out.table(
      ['id', 'name', 'harness', 'machine kind', 'model', 'granted'],
      items.map((a) => [a.id, a.name, a.harness, a.machine_kind, a.default_model ?? '-', a.granted_at]),
    );
  });
  return exitCodes.ok;
}

async function get(ctx: Context, id: string): Promise<number> {
  const agent = await ctx.client().cli.agents.get(id);
  ctx.out.result(agent, () => show(ctx, agent));
  return exitCodes.ok;
}

async function create(ctx: Context, opts: AgentFlags & TeamFlags): Promise<number> {
  const body = await bodyOf(opts);
  refuseDeclarative(ctx, body);
  const { teamId } = await resolveTeam(ctx, opts);
  const agent = await ctx.client().cli.agents.create({ ...body, team_id: teamId } as AgentCreateBody);
  ctx.out.result(agent, () => ctx.out.line(`created agent ${agent.name} (${agent.id})`));
  return exitCodes.ok;
}

async function update(ctx: Context, id: string, opts: AgentFlags): Promise<number> {
  const body = await bodyOf(opts);
  if (Object.keys(body).length === 0)
    throw new CliError('nothing to update: pass --file or a field flag', exitCodes.usage);
  refuseDeclarative(ctx, body);
  const agent = await ctx.client().cli.agents.update(id, body as AgentPutBody);
  ctx.out.result(agent, () => ctx.out.line(`updated agent ${agent.name} (${agent.id})`));
  return exitCodes.ok;
}

const withAgentFlags = (command: Command): Command =>
  command
    .option('-f, --file <agent.yaml>', 'read the fields from an agent.yaml (flags win over it)')
    .option('--name <name>', 'the agent name')
    .option('--tagline <text>', 'a one-line description')
    .option('--entrypoint <entrypoint>', 'the entrypoint')
    .option('--model <model>', 'the default model')
    .option('--harness <harness>', 'the harness')
    .option('--machine-kind <kind>', 'the machine kind')
    .option('--memory', 'enable memory')
    .option('--no-memory', 'disable memory')
    .option('--browser', 'enable the browser')
    .option('--no-browser', 'disable the browser')
    .option('--network <policy>', 'a named network policy');

export function agentCommands(program: Command, context: () => Context): void {
  const agent = program.command('agent').description('control-plane agents');
  withTeamFlags(agent.command('list').description("list a team's agents"))
    .option('--limit <n>', 'at most this many (default 200)')
    .action(async (opts) => context().exit(await list(context(), opts)));
  agent
    .command('get')
    .description('show an agent')
    .argument('<agent>', 'the agent id')
    .action(async (id: string) => context().exit(await get(context(), id)));
  withAgentFlags(withTeamFlags(agent.command('create').description('create an agent in a team'))).action(
    async (opts) => context().exit(await create(context(), opts)),
  );
  withAgentFlags(
    agent.command('update').description("change an agent's fields").argument('<agent>', 'the agent id'),
  ).action(async (id: string, opts) => context().exit(await update(context(), id, opts)));
}
