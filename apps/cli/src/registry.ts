/** `paddock skills publish|list` (the skills registry, D14) and `paddock harnesses`. */
import { readdir, readFile } from 'node:fs/promises';
import { basename, join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';
import { resolveOrg } from './teams.ts';

interface SkillFile {
  path: string;
  content: string;
  encoding: 'utf8' | 'base64';
}

/** Every file under `dir` (dot files and folders left out), text as utf8, other bytes as base64. */
async function filesOf(dir: string): Promise<SkillFile[]> {
  const root = resolve(dir);
  let entries: string[];
  try {
    entries = (await readdir(root, { recursive: true, withFileTypes: true }))
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .filter(
        (file) =>
          !relative(root, file)
            .split(sep)
            .some((part) => part.startsWith('.')),
      );
  } catch (error) {
    throw new CliError(`cannot read ${dir}: ${(error as Error).message}`, exitCodes.usage);
  }
  const files: SkillFile[] = [];
  for (const file of entries.sort()) {
    const bytes = await readFile(file);
    const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    const utf8 = Buffer.from(text, 'utf8').equals(bytes);
    files.push({
      path: relative(root, file).split(sep).join('/'),
      content: utf8 ? text : bytes.toString('base64'),
      encoding: utf8 ? 'utf8' : 'base64',
    });
  }
  if (files.length === 0) throw new CliError(`${dir} has no files to publish`, exitCodes.usage);
  return files;
}

/** The creator: `--creator`, else the name of the caller's organization. */
async function creatorOf(ctx: Context, creator: string | undefined): Promise<string> {
  if (creator !== undefined) return creator;
  const orgId = await resolveOrg(ctx, undefined);
  const { items } = await ctx.client().cli.orgs.list();
  return items.find((o) => o.id === orgId)!.name;
}

interface PublishFlags {
  creator?: string;
  slug?: string;
  version: string;
  public?: boolean;
}

async function publish(ctx: Context, dir: string, opts: PublishFlags): Promise<number> {
  const files = await filesOf(dir);
  const creator = await creatorOf(ctx, opts.creator);
  const slug = opts.slug ?? basename(resolve(dir));
  const record = await ctx.client().skills.publish(creator, slug, opts.version, {
    files,
    ...(opts.public && { public: true }),
  });
  const { files: published, ...summary } = record;
  const doc = { ...summary, files: published.map((f) => f.path) };
  ctx.out.result(doc, () =>
    ctx.out.line(
      `published ${record.creator}/${record.slug}@${record.version} (${published.length} files, ${record.hash.slice(0, 12)})`,
    ),
  );
  return exitCodes.ok;
}

async function list(ctx: Context, opts: { creator?: string }): Promise<number> {
  const creator = await creatorOf(ctx, opts.creator);
  const { items } = await ctx.client().skills.list(creator);
  ctx.out.result({ items }, () => {
    if (items.length === 0) return ctx.out.line(`no skills from ${creator}`);
    ctx.out.table(
      ['skill', 'latest', 'versions'],
      items.map((s) => [`${s.creator}/${s.slug}`, s.latest ?? '-', s.versions.join(', ')]),
    );
  });
  return exitCodes.ok;
}

async function harnesses(ctx: Context): Promise<number> {
  const { items } = await ctx.client().harnesses();
  ctx.out.result({ items }, () =>
    ctx.out.table(
      ['harness', 'program', 'version', 'kind', 'installed', 'dialect', 'steering', 'resume', 'cancel'],
      items.map((h) => [
        h.harness,
        h.program,
        h.version,
        h.kind,
        h.installed ? 'yes' : 'no',
        h.dialect ?? '-',
        h.abilities.steering ? 'yes' : 'no',
        h.abilities.resume,
        h.abilities.cancel ? 'yes' : 'no',
      ]),
    ),
  );
  return exitCodes.ok;
}

export function registryCommands(program: Command, context: () => Context): void {
  const skills = program.command('skills').description('the skills registry: <creator>/<slug>@<version>');
  skills
    .command('publish')
    .description("publish a folder's files as an immutable version of a skill")
    .argument('<dir>', 'the skill folder (SKILL.md and the rest)')
    .argument('<version>', 'the version, e.g. 1.0.0')
    .option('--slug <slug>', 'the skill name (default: the folder name)')
    .option('--creator <org>', 'the creator organization (default: your only one)')
    .option('--public', 'readable by every organization')
    .action(async (dir: string, version: string, opts: PublishFlags) =>
      context().exit(await publish(context(), dir, { ...opts, version })),
    );
  skills
    .command('list')
    .description("list a creator's skills")
    .option('--creator <org>', 'the creator organization (default: your only one)')
    .action(async (opts) => context().exit(await list(context(), opts)));
  program
    .command('harnesses')
    .description('each harness: its program and version, installed or not, its dialect and abilities')
    .action(async () => context().exit(await harnesses(context())));
}
