/**
 * Declarative agents (D15; issue 16): `paddock link <agent> [dir]` writes the agent into a folder
 * and records the link; `status` shows local and cloud drift; `sync` shows a plan and publishes
 * the manifest with `base_revision` (a 409 means: pull first); `pull` rewrites the folder from the
 * cloud; `unlink` forgets the link (`.paddock/` only).
 */
import { readdir } from 'node:fs/promises';
import type { PaddockClient } from '@paddock/sdk';
import type { Command } from 'commander';
import { type Files, folderOf, readFolder, removeFile, writeAtomic } from './link-files.ts';
import { driftCount, localDrift, readLink, removeLink, requireLink, writeLink } from './link-plan.ts';
import { type Agent, metaOf, rootOf, sync } from './link-sync.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

const slugOf = (name: string) =>
  name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '');

/** Writes the agent's files into the folder (all checked first), removes the folder's others, records the link. */
async function materialize(root: string, agent: Agent, client: PaddockClient) {
  const manifest = await client.cli.agents.manifest(agent.id);
  const { files, skipped } = folderOf(metaOf(agent), manifest);
  const current = await readFolder(root);
  const written: string[] = [];
  const removed: string[] = [];
  for (const [path, content] of files)
    if (current.get(path) !== content) {
      await writeAtomic(root, path, content);
      written.push(path);
    }
  for (const path of current.keys())
    if (!files.has(path)) {
      await removeFile(root, path);
      removed.push(path);
    }
  await writeLink(root, agent.id, manifest.revision, files);
  return { agent_id: agent.id, dir: root, revision: manifest.revision, written, removed, skipped };
}

function report(ctx: Context, verb: string, result: Awaited<ReturnType<typeof materialize>>) {
  ctx.out.result(result, () => {
    ctx.out.line(`${verb} agent ${result.agent_id} in ${result.dir} at revision ${result.revision}`);
    for (const path of result.written) ctx.out.line(`  wrote ${path}`);
    for (const path of result.removed) ctx.out.line(`  removed ${path}`);
  });
  for (const what of result.skipped) ctx.out.note(`skipped ${what}: the folder layout has no place for it`);
}

async function link(
  ctx: Context,
  agentId: string,
  dir: string | undefined,
  opts: { yes?: boolean; force?: boolean },
) {
  const client = ctx.client();
  const agent = await client.cli.agents.get(agentId);
  const root = rootOf(dir ?? (slugOf(agent.name) || agent.id));
  const entries = await readdir(root).catch(() => [] as string[]);
  const record = await readLink(root);
  if (record && record.agent_id === agent.id) {
    const drift = localDrift(record, await readFolder(root));
    if (driftCount(drift) > 0 && !opts.force)
      throw new CliError(
        `refused: ${root} has local changes since its base revision (${[...drift.added, ...drift.changed, ...drift.removed].join(', ')}); ` +
          '`paddock sync` them, or pass --force to drop them',
      );
  } else if (entries.length > 0 && !opts.yes && !opts.force)
    throw new CliError(
      `refused: ${root} is not empty and not a link of agent ${agent.id}${record ? ` (it is linked to ${record.agent_id})` : ''}; ` +
        'pass --yes to write the agent there anyway',
    );
  report(ctx, 'Linked', await materialize(root, agent, client));
  return exitCodes.ok;
}

async function status(ctx: Context, opts: { dir?: string }) {
  const root = rootOf(opts.dir);
  const record = await requireLink(root);
  const files: Files = await readFolder(root);
  const local = localDrift(record, files);
  const { revision } = await ctx.client().cli.agents.revision(record.agent_id);
  const doc = {
    agent_id: record.agent_id,
    dir: root,
    base_revision: record.base_revision,
    cloud_revision: revision,
    local_drift: local,
    local_changed: driftCount(local) > 0,
    cloud_changed: revision !== record.base_revision,
  };
  ctx.out.result(doc, () => {
    ctx.out.line(`agent ${doc.agent_id} in ${root}`);
    ctx.out.line(`base revision ${doc.base_revision}`);
    if (!doc.local_changed) ctx.out.line('local: no changes since the base revision');
    else {
      ctx.out.line(`local: ${driftCount(local)} file(s) changed since the base revision`);
      for (const path of local.added) ctx.out.line(ctx.out.out.green(`  + ${path}`));
      for (const path of local.changed) ctx.out.line(ctx.out.out.yellow(`  ~ ${path}`));
      for (const path of local.removed) ctx.out.line(ctx.out.out.red(`  - ${path}`));
    }
    ctx.out.line(
      doc.cloud_changed
        ? `cloud: changed since the base revision (now ${revision}); run \`paddock pull\``
        : 'cloud: no changes since the base revision',
    );
  });
  return exitCodes.ok;
}

async function pull(ctx: Context, opts: { dir?: string; force?: boolean }) {
  const root = rootOf(opts.dir);
  const record = await requireLink(root);
  const drift = localDrift(record, await readFolder(root));
  if (driftCount(drift) > 0 && !opts.force)
    throw new CliError(
      `refused: pulling would drop local changes (${[...drift.added, ...drift.changed, ...drift.removed].join(', ')}); ` +
        '`paddock sync` them first, or pass --force to drop them',
    );
  const client = ctx.client();
  report(ctx, 'Pulled', await materialize(root, await client.cli.agents.get(record.agent_id), client));
  return exitCodes.ok;
}

async function unlink(ctx: Context, opts: { dir?: string }) {
  const root = rootOf(opts.dir);
  const record = await requireLink(root);
  await removeLink(root);
  ctx.out.result({ agent_id: record.agent_id, dir: root, unlinked: true }, () =>
    ctx.out.line(`Unlinked ${root} from agent ${record.agent_id} (its files are left as they are)`),
  );
  return exitCodes.ok;
}

export function linkCommands(program: Command, context: () => Context): void {
  const dirOption = ['--dir <dir>', 'the linked folder (default: the current directory)'] as const;
  program
    .command('link <agent> [dir]')
    .description(
      'write an agent into a folder (agent.yaml, instructions.md, skills/, playbooks/, evals/) and link it',
    )
    .option('-y, --yes', 'write into a non-empty folder that is not this agent’s link')
    .option('--force', 'also drop local changes of an existing link of this agent')
    .action(async (agent: string, dir: string | undefined, opts) =>
      context().exit(await link(context(), agent, dir, opts)),
    );
  program
    .command('status')
    .description('local drift (files changed since the base revision) and cloud drift (the agent moved)')
    .option(...dirOption)
    .action(async (opts) => context().exit(await status(context(), opts)));
  program
    .command('sync')
    .description("show the plan, then publish the folder as the agent's manifest (with base_revision)")
    .option(...dirOption)
    .option('-y, --yes', 'publish without asking')
    .option('--dry-run', 'show the plan only')
    .action(async (opts) => context().exit(await sync(context(), opts)));
  program
    .command('pull')
    .description('rewrite the folder from the cloud')
    .option(...dirOption)
    .option('--force', 'drop local changes')
    .action(async (opts) => context().exit(await pull(context(), opts)));
  program
    .command('unlink')
    .description('forget the link (removes .paddock/ only; the files stay)')
    .option(...dirOption)
    .action(async (opts) => context().exit(await unlink(context(), opts)));
}
