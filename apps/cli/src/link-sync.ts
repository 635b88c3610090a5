/**
 * `paddock sync`: the folder's plan against the cloud, confirmed (`--yes`, or `y` on a terminal),
 * then published with `base_revision` and the reconcile flags for playbooks, evals and schedules
 * (the folder models all of them, so what it omits is archived or removed). A 409 means the cloud
 * moved: pull first. On the legacy control plane a `machine_kind` or `default_model` write (and a
 * schedule write) is refused before anything is sent.
 */
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { type AgentPutBody, type PaddockClient, PaddockError } from '@paddock/sdk';
import { refuseOnLegacy } from './config.ts';
import { componentsOf, type Meta, metaFields, readFolder } from './link-files.ts';
import { planOf, planSize, requireLink, showPlan, writeLink } from './link-plan.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

export type Agent = Awaited<ReturnType<PaddockClient['cli']['agents']['get']>>;

/** The linked folder: `--dir`, else the current directory. */
export const rootOf = (dir: string | undefined) => resolve(dir ?? process.cwd());

export const metaOf = (agent: Agent): Meta =>
  Object.fromEntries(metaFields.map((field) => [field, (agent[field] as string | null | undefined) ?? null]));

/** A confirmation: `--yes`; on a terminal, `y`; off a terminal without `--yes`, a usage error. */
export async function confirm(yes: boolean | undefined, question: string, otherwise: string): Promise<void> {
  if (yes) return;
  if (!process.stdin.isTTY)
    throw new CliError(`${question}: stdin is not a terminal; ${otherwise}`, exitCodes.usage);
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const answer = await new Promise<string>((done) => rl.question(`${question} [y/N] `, done));
  rl.close();
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('not confirmed', exitCodes.failed);
}

/** Turns a 409 on publish into the advice to pull. */
export function conflictAdvice(error: unknown, baseRevision: string): never {
  if (error instanceof PaddockError && error.status === 409) {
    const detail = typeof error.detail === 'string' ? error.detail : error.message;
    throw new CliError(
      `refused (409 ${error.code}): the agent changed in the cloud since this folder's base revision ` +
        `${baseRevision}: ${detail}. Run \`paddock pull\` to bring the cloud's changes (copy or commit your ` +
        'edits first: pull refuses to drop them without --force), then sync again',
    );
  }
  throw error;
}

export async function sync(ctx: Context, opts: { dir?: string; yes?: boolean; dryRun?: boolean }) {
  const root = rootOf(opts.dir);
  const record = await requireLink(root);
  const files = await readFolder(root);
  const local = componentsOf(files);
  const client = ctx.client();
  const [agent, manifest] = await Promise.all([
    client.cli.agents.get(record.agent_id),
    client.cli.agents.manifest(record.agent_id),
  ]);
  const plan = planOf(local, metaOf(agent), manifest);
  const cloudMoved = manifest.revision !== record.base_revision;
  const endpoints = ctx.endpoints();
  for (const change of plan.agent) {
    if (change.field === 'machine_kind') refuseOnLegacy(endpoints, 'declarative_machine_kind');
    if (change.field === 'default_model') refuseOnLegacy(endpoints, 'declarative_default_model');
  }
  if (plan.components.some((step) => step.type === 'schedule')) refuseOnLegacy(endpoints, 'schedule_trigger');
  const doc = {
    agent_id: record.agent_id,
    dir: root,
    base_revision: record.base_revision,
    cloud_revision: manifest.revision,
    cloud_changed: cloudMoved,
    plan,
  };
  if (!ctx.out.json) {
    showPlan(ctx.out, plan);
    if (cloudMoved)
      ctx.out.note(
        `note: the cloud moved since the base revision (${record.base_revision} → ${manifest.revision}); ` +
          'the publish will be refused: run `paddock pull` first',
      );
  }
  if (opts.dryRun || (planSize(plan) === 0 && !cloudMoved)) {
    if (ctx.out.json) ctx.out.document({ ...doc, synced: false, dry_run: Boolean(opts.dryRun) });
    return exitCodes.ok;
  }
  await confirm(opts.yes, 'Publish this plan', 'pass --yes to publish, or --dry-run to see the plan only');
  // The agent's fields first (a refused field publishes nothing), unless the cloud already moved:
  // then the publish's 409 comes first and nothing is written.
  const updateAgent = async () => {
    if (plan.agent.length === 0) return;
    const body: Record<string, string | null> = {};
    for (const change of plan.agent) body[change.field] = change.to;
    await client.cli.agents.update(record.agent_id, body as AgentPutBody);
  };
  if (!cloudMoved) await updateAgent();
  let published: Awaited<ReturnType<PaddockClient['cli']['agents']['publish']>>;
  try {
    published = await client.cli.agents.publish(record.agent_id, {
      components: local.components,
      base_revision: record.base_revision,
      reconcile_playbooks: true,
      reconcile_evals: true,
      reconcile_schedules: true,
    });
  } catch (error) {
    conflictAdvice(error, record.base_revision);
  }
  if (cloudMoved) await updateAgent();
  await writeLink(root, record.agent_id, published.revision, files);
  const warnings = published.warnings ?? [];
  for (const w of warnings) ctx.out.note(`warning: ${w.type} ${w.name}: ${w.message} (${w.code})`);
  ctx.out.result({ ...doc, synced: true, dry_run: false, revision: published.revision, warnings }, () =>
    ctx.out.line(`Synced agent ${record.agent_id}: revision ${published.revision}`),
  );
  return exitCodes.ok;
}
