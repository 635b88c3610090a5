/**
 * The link record (`.paddock/link.json`), local drift (files changed since the base revision, by
 * the hashes of what was written) and the plan a sync shows: component by component, what will
 * be added, changed or removed, and which agent fields change.
 */
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Component, Files, Manifest, Meta } from './link-files.ts';
import { hashesOf, metaFields, sha256, writeAtomic } from './link-files.ts';
import { CliError, exitCodes, type Output } from './output.ts';

export const linkFile = '.paddock/link.json';

export interface LinkRecord {
  agent_id: string;
  base_revision: string;
  /** sha256 of each file as it was at the base revision. */
  files: Record<string, string>;
  linked_at: string;
}

export async function readLink(root: string): Promise<LinkRecord | undefined> {
  let text: string;
  try {
    text = await readFile(join(root, linkFile), 'utf8');
  } catch {
    return undefined;
  }
  const record = JSON.parse(text) as LinkRecord;
  if (typeof record?.agent_id !== 'string' || typeof record.base_revision !== 'string')
    throw new CliError(`${join(root, linkFile)} is not a link record`, exitCodes.failed);
  record.files ??= {};
  return record;
}

/** The link of the folder, or a refusal naming how to make one. */
export async function requireLink(root: string): Promise<LinkRecord> {
  const record = await readLink(root);
  if (!record)
    throw new CliError(`${root} is not a linked folder (no ${linkFile}): run \`paddock link <agent> [dir]\``);
  return record;
}

export async function writeLink(root: string, agentId: string, revision: string, files: Files) {
  const record: LinkRecord = {
    agent_id: agentId,
    base_revision: revision,
    files: hashesOf(files),
    linked_at: new Date().toISOString(),
  };
  await writeAtomic(root, linkFile, `${JSON.stringify(record, null, 2)}\n`);
  return record;
}

export async function removeLink(root: string): Promise<void> {
  await rm(join(root, '.paddock'), { recursive: true, force: true });
}

export interface Drift {
  added: string[];
  changed: string[];
  removed: string[];
}

export const driftCount = (d: Drift) => d.added.length + d.changed.length + d.removed.length;

/** The folder's files against the hashes of what was written at the base revision. */
export function localDrift(record: LinkRecord, files: Files): Drift {
  const drift: Drift = { added: [], changed: [], removed: [] };
  for (const [path, text] of files) {
    const base = record.files[path];
    if (base === undefined) drift.added.push(path);
    else if (base !== sha256(text)) drift.changed.push(path);
  }
  for (const path of Object.keys(record.files)) if (!files.has(path)) drift.removed.push(path);
  for (const list of Object.values(drift)) list.sort();
  return drift;
}

export type Action = 'add' | 'change' | 'remove' | 'archive';
export interface PlanStep {
  action: Action;
  type: string;
  name: string;
  /** Files of the component added, changed or removed (for `change`). */
  files?: string[];
}
export interface MetaChange {
  field: string;
  from: string | null;
  to: string | null;
}
export interface Plan {
  components: PlanStep[];
  agent: MetaChange[];
}

const keyOf = (c: { type: string; name: string }) => `${c.type}\u0000${c.name}`;

/** What a sync of `local` over the cloud's `manifest` and agent fields would do. */
export function planOf(
  local: { meta: Meta; components: Component[] },
  cloudAgent: Meta,
  manifest: Manifest,
): Plan {
  const cloud = new Map(manifest.components.filter((c) => c.status !== 'archived').map((c) => [keyOf(c), c]));
  const steps: PlanStep[] = [];
  const seen = new Set<string>();
  for (const c of local.components) {
    const key = keyOf(c);
    if (seen.has(key)) throw new CliError(`refused: a second ${c.type} named ${c.name} in the folder`);
    seen.add(key);
    const before = cloud.get(key);
    if (!before) {
      steps.push({ action: 'add', type: c.type, name: c.name });
      continue;
    }
    const was = new Map(before.files.map((f) => [f.path, f.content]));
    const now = new Map(c.files.map((f) => [f.path, f.content]));
    const files = [
      ...[...now].filter(([p, text]) => was.get(p) !== text).map(([p]) => (was.has(p) ? `~ ${p}` : `+ ${p}`)),
      ...[...was.keys()].filter((p) => !now.has(p)).map((p) => `- ${p}`),
    ];
    if (files.length > 0) steps.push({ action: 'change', type: c.type, name: c.name, files });
  }
  for (const [key, c] of cloud)
    if (!seen.has(key))
      steps.push({
        action: c.type === 'playbook' || c.type === 'eval' ? 'archive' : 'remove',
        type: c.type,
        name: c.name,
      });
  const agent: MetaChange[] = [];
  for (const field of metaFields) {
    const to = local.meta[field];
    if (to === undefined) continue;
    const from = cloudAgent[field] ?? null;
    if ((to ?? null) !== from) agent.push({ field, from, to: to ?? null });
  }
  return { components: steps, agent };
}

export const planSize = (plan: Plan) => plan.components.length + plan.agent.length;

const signs: Record<Action, string> = { add: '+', change: '~', remove: '-', archive: '-' };

/** The plan for people, on stdout. */
export function showPlan(out: Output, plan: Plan): void {
  if (planSize(plan) === 0) {
    out.line('Nothing to sync: the folder matches the cloud.');
    return;
  }
  const colour = { add: out.out.green, change: out.out.yellow, remove: out.out.red, archive: out.out.red };
  for (const step of plan.components) {
    const what = step.action === 'archive' ? 'archive' : step.action;
    out.line(colour[step.action](`${signs[step.action]} ${step.type} ${step.name} (${what})`));
    for (const file of step.files ?? []) out.line(`    ${file}`);
  }
  for (const change of plan.agent)
    out.line(
      out.out.yellow(`~ agent ${change.field}: ${change.from ?? '(none)'} → ${change.to ?? '(none)'}`),
    );
  const count = (action: Action) => plan.components.filter((s) => s.action === action).length;
  out.line(
    `Plan: ${count('add')} to add, ${count('change')} to change, ${count('remove') + count('archive')} to remove` +
      (plan.agent.length > 0 ? `, ${plan.agent.length} agent field(s) to update` : ''),
  );
}
