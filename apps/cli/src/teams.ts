/** `paddock orgs` and `paddock team list|create`, and the organization and team flags others share. */
import type { Command } from 'commander';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

export interface TeamFlags {
  org?: string;
  team?: string;
}

/** `--org` (an id or a name), else the caller's only organization. */
export async function resolveOrg(ctx: Context, org: string | undefined): Promise<string> {
  const { items } = await ctx.client().cli.orgs.list();
  if (org !== undefined) {
    const found = items.find((o) => o.id === org || o.name === org);
    if (!found) throw new CliError(`no organization ${org} among yours`, exitCodes.failed);
    return found.id;
  }
  if (items.length === 1) return items[0]!.id;
  throw new CliError(
    items.length === 0 ? 'you belong to no organization' : 'you belong to several organizations: pass --org',
    exitCodes.usage,
  );
}

/** `--team` (an id or a name in the organization), else the organization's only team. */
export async function resolveTeam(
  ctx: Context,
  flags: TeamFlags,
): Promise<{ orgId: string; teamId: string }> {
  const orgId = await resolveOrg(ctx, flags.org);
  const { items } = await ctx.client().cli.teams.list(orgId);
  if (flags.team !== undefined) {
    const found = items.find((t) => t.id === flags.team || t.name === flags.team);
    if (!found) throw new CliError(`the organization has no team ${flags.team}`, exitCodes.failed);
    return { orgId, teamId: found.id };
  }
  if (items.length === 1) return { orgId, teamId: items[0]!.id };
  throw new CliError(
    items.length === 0 ? 'the organization has no team' : 'the organization has several teams: pass --team',
    exitCodes.usage,
  );
}

export const withTeamFlags = (command: Command): Command =>
  command
    .option('--org <org>', 'the organization, an id or a name (default: your only one)')
    .option('--team <team>', 'the team, an id or a name (default: the organization’s only one)');

async function orgs(ctx: Context): Promise<number> {
  const { items } = await ctx.client().cli.orgs.list();
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no organizations');
    ctx.out.table(
      ['id', 'name', 'role'],
      items.map((o) => [o.id, o.name, o.role]),
    );
  });
  return exitCodes.ok;
}

async function listTeams(ctx: Context, opts: { org?: string }): Promise<number> {
  const { items } = await ctx.client().cli.teams.list(await resolveOrg(ctx, opts.org));
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line('no teams');
    ctx.out.table(
      ['id', 'name', 'org'],
      items.map((t) => [t.id, t.name, t.org_id]),
    );
  });
  return exitCodes.ok;
}

async function createTeam(ctx: Context, name: string, opts: { org?: string }): Promise<number> {
  const team = await ctx.client().cli.teams.create(await resolveOrg(ctx, opts.org), name);
  ctx.out.result(team, () => ctx.out.line(`created team ${team.name} (${team.id})`));
  return exitCodes.ok;
}

export function teamCommands(program: Command, context: () => Context): void {
  program
    .command('orgs')
    .description('the organizations you belong to, with your role')
    .action(async () => context().exit(await orgs(context())));
  const team = program.command('team').description("an organization's teams");
  team
    .command('list')
    .description("list an organization's teams")
    .option('--org <org>', 'the organization, an id or a name (default: your only one)')
    .action(async (opts) => context().exit(await listTeams(context(), opts)));
  team
    .command('create')
    .description('add a team to an organization')
    .argument('<name>', 'the team name')
    .option('--org <org>', 'the organization, an id or a name (default: your only one)')
    .action(async (name: string, opts) => context().exit(await createTeam(context(), name, opts)));
}
