/**
 * A linked agent's folder (D15): `agent.yaml` (metadata, harness, machine kind, model, MCP servers,
 * schedules), `instructions.md`, `skills/<slug>/…`, `playbooks/<name>/…`, `evals/<name>/…`, and
 * `.paddock/link.json`. Turns a manifest into the folder's files and back, and writes them
 * atomically, never outside the folder.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { PaddockClient } from '@paddock/sdk';
import { parse, stringify } from 'yaml';
import { CliError, exitCodes } from './output.ts';

export type Manifest = Awaited<ReturnType<PaddockClient['cli']['agents']['manifest']>>;

export interface ComponentFile {
  path: string;
  content: string;
}
export interface Component {
  type: string;
  name: string;
  files: ComponentFile[];
}
/** The agent fields `agent.yaml` holds, by their names on the control plane. */
export const metaFields = ['name', 'tagline', 'harness', 'machine_kind', 'default_model'] as const;
export type Meta = Partial<Record<(typeof metaFields)[number], string | null>>;
/** `agent.yaml`'s key for each field (`model` stands for `default_model`). */
const yamlKey = (field: string) => (field === 'default_model' ? 'model' : field);

/** Relative path (with `/`) → content. */
export type Files = Map<string, string>;

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

const refuse = (message: string): never => {
  throw new CliError(`refused: ${message}`, exitCodes.failed);
};

/** A control character (U+0000–U+001F) anywhere in the text. */
const hasControl = (text: string) => [...text].some((ch) => ch.charCodeAt(0) < 0x20);

/** One path segment of a name: no separators, no `.`/`..`, nothing hidden, no control characters. */
export function checkSegment(value: string, what: string): string {
  if (
    value === '' ||
    value === '.' ||
    value === '..' ||
    value.startsWith('.') ||
    /[/\\:]/.test(value) ||
    hasControl(value) ||
    isAbsolute(value)
  )
    refuse(`${what} ${JSON.stringify(value)} is not a plain name (it would leave its folder)`);
  return value;
}

/** A relative path inside a component: `/`-separated plain segments. */
export function checkRelative(value: string, what: string): string {
  if (isAbsolute(value) || value.includes('\\') || /^[A-Za-z]:/.test(value))
    refuse(`${what} ${JSON.stringify(value)} is not a relative path inside the folder`);
  for (const segment of value.split('/'))
    if (segment === '' || segment === '.' || segment === '..' || hasControl(segment))
      refuse(`${what} ${JSON.stringify(value)} escapes its folder or has empty segments`);
  return value;
}

const skillSource = (files: ComponentFile[]) => {
  const text = files.find((f) => f.path === 'skill.json')?.content;
  if (!text) return undefined;
  try {
    const source = (JSON.parse(text) as { source?: unknown }).source;
    return typeof source === 'string' ? source : undefined;
  } catch {
    return undefined;
  }
};
/** `registry:creator/slug@1.2.0` → `creator/slug`. */
const skillName = (source: string) => source.replace(/^registry:/, '').replace(/@.*$/, '');

const jsonText = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;
const jsonOf = (c: Component, file: string): unknown => {
  const content = c.files.find((f) => f.path === file)?.content;
  if (c.files.length !== 1 || content === undefined)
    return refuse(`${c.type} ${c.name} is not one ${file} file`);
  try {
    return JSON.parse(content);
  } catch {
    return refuse(`${c.type} ${c.name}: ${file} is not JSON`);
  }
};

/** The folder's files for an agent and its manifest; `skipped` names components it cannot hold. */
export function folderOf(agent: Meta, manifest: Manifest): { files: Files; skipped: string[] } {
  const files: Files = new Map();
  const skipped: string[] = [];
  const doc: Record<string, unknown> = {};
  for (const field of metaFields) if (agent[field] != null) doc[yamlKey(field)] = agent[field];
  const mcp: Record<string, unknown> = {};
  const schedules: Record<string, unknown> = {};
  const put = (path: string, content: string) => {
    if (files.has(path)) refuse(`two components would both write ${path}`);
    files.set(path, content);
  };
  for (const c of manifest.components) {
    if (c.status === 'archived') continue;
    if (c.type === 'instructions')
      put('instructions.md', c.files.find((f) => f.path === 'instructions.md')?.content ?? '');
    else if (c.type === 'mcp_server') mcp[c.name] = jsonOf(c, 'server.json');
    else if (c.type === 'schedule') schedules[c.name] = jsonOf(c, 'schedule.json');
    else if (c.type === 'skill' || c.type === 'playbook' || c.type === 'eval') {
      const folder = c.type === 'skill' ? 'skills' : `${c.type}s`;
      const dir = checkSegment(
        c.type === 'skill' ? (c.name.split('/').at(-1) ?? '') : c.name,
        `${c.type} name`,
      );
      if (c.type === 'skill') for (const part of c.name.split('/')) checkSegment(part, 'skill name');
      for (const f of c.files)
        put(`${folder}/${dir}/${checkRelative(f.path, `${c.type} ${c.name} file`)}`, f.content);
    } else skipped.push(`${c.type} ${c.name}`);
  }
  if (Object.keys(mcp).length > 0) doc.mcp_servers = mcp;
  if (Object.keys(schedules).length > 0) doc.schedules = schedules;
  files.set('agent.yaml', stringify(doc));
  return { files, skipped };
}

/** The folder's managed files: agent.yaml, instructions.md, skills/, playbooks/, evals/. */
export async function readFolder(root: string): Promise<Files> {
  const files: Files = new Map();
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(root, rel), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const path = `${rel}/${entry.name}`;
      if (entry.name.startsWith('.')) continue;
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files.set(path, await readFile(join(root, path), 'utf8'));
    }
  };
  for (const top of ['agent.yaml', 'instructions.md'])
    await readFile(join(root, top), 'utf8').then(
      (text) => files.set(top, text),
      () => {},
    );
  for (const top of ['skills', 'playbooks', 'evals']) await walk(top);
  return files;
}

/** The folder's files as agent metadata and manifest components. */
export function componentsOf(files: Files): { meta: Meta; components: Component[] } {
  let doc: Record<string, unknown> = {};
  const yamlText = files.get('agent.yaml');
  if (yamlText !== undefined) {
    let parsed: unknown;
    try {
      parsed = parse(yamlText);
    } catch (error) {
      return refuse(`agent.yaml is not valid YAML: ${(error as Error).message}`);
    }
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed)))
      refuse('agent.yaml is not a YAML mapping');
    doc = (parsed ?? {}) as Record<string, unknown>;
  }
  const meta: Meta = {};
  for (const field of metaFields) {
    const value = doc[yamlKey(field)];
    if (value === undefined) continue;
    if (value !== null && typeof value !== 'string') refuse(`agent.yaml: ${yamlKey(field)} is not a string`);
    meta[field] = value as string | null;
  }
  const components: Component[] = [];
  const instructions = files.get('instructions.md');
  if (instructions !== undefined)
    components.push({
      type: 'instructions',
      name: 'instructions',
      files: [{ path: 'instructions.md', content: instructions }],
    });
  const mapOf = (key: string) => {
    const value = doc[key] ?? {};
    if (typeof value !== 'object' || Array.isArray(value))
      return refuse(`agent.yaml: ${key} is not a mapping`);
    return Object.entries(value as Record<string, unknown>);
  };
  for (const [name, config] of mapOf('mcp_servers'))
    components.push({
      type: 'mcp_server',
      name,
      files: [{ path: 'server.json', content: jsonText(config) }],
    });
  for (const [name, config] of mapOf('schedules'))
    components.push({
      type: 'schedule',
      name,
      files: [{ path: 'schedule.json', content: jsonText(config) }],
    });
  const grouped = new Map<string, Component>();
  for (const [path, content] of files) {
    const [top, dir, ...rest] = path.split('/');
    if (top !== 'skills' && top !== 'playbooks' && top !== 'evals') continue;
    if (!dir || rest.length === 0) refuse(`${path}: files go in ${top}/<name>/…`);
    const type = top === 'skills' ? 'skill' : top.slice(0, -1);
    const key = `${type}/${dir}`;
    const c = grouped.get(key) ?? { type, name: dir!, files: [] };
    c.files.push({ path: rest.join('/'), content });
    grouped.set(key, c);
  }
  for (const c of grouped.values()) {
    if (c.type === 'skill') {
      const source = skillSource(c.files);
      if (source) c.name = skillName(source);
    }
    c.files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    components.push(c);
  }
  return { meta, components };
}

/** Where `rel` is under `root`, refused when it would be anywhere else. */
export function inside(root: string, rel: string): string {
  const target = resolve(root, ...checkRelative(rel, 'path').split('/'));
  const back = relative(resolve(root), target);
  if (back === '' || back.startsWith('..') || isAbsolute(back) || back.split(sep).includes('..'))
    refuse(`${rel} is outside the linked folder`);
  return target;
}

/** Writes a file by a temporary file in the same folder and a rename: all of it, or nothing. */
export async function writeAtomic(root: string, rel: string, content: string): Promise<void> {
  const target = inside(root, rel);
  await mkdir(dirname(target), { recursive: true });
  const temp = join(dirname(target), `.paddock-${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temp, content, 'utf8');
    await rename(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    throw error;
  }
}

/** Removes a file of the folder (never outside it). */
export async function removeFile(root: string, rel: string): Promise<void> {
  await rm(inside(root, rel), { force: true });
}

/** The sha256 of each file. */
export const hashesOf = (files: Files): Record<string, string> =>
  Object.fromEntries(
    [...files].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, text]) => [path, sha256(text)]),
  );
