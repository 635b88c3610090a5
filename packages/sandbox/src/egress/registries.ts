import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const toolTimeoutMs = 10_000;

/** The package sources this runner's own tools are configured with: URLs, by tool. */
export interface RegistrySources {
  npm: string[];
  pip: string[];
  apt: string[];
}

export interface RegistryReadOptions {
  /** The environment the tools run with (their settings may come from it): the runner's, from its caller. */
  env: NodeJS.ProcessEnv;
  /** Where apt's sources are. Default: `/etc/apt`. */
  aptDir?: string;
}

/**
 * What the `registries` network policy allows (issue 15): the hosts of the package sources npm, pip
 * and apt are configured to use on this runner, read from the tools themselves at start, so no
 * registry is named in code. A tool that is not installed contributes nothing; `file:` sources are
 * local and are left out.
 */
export async function readRegistries(options: RegistryReadOptions): Promise<{
  sources: RegistrySources;
  hosts: string[];
}> {
  const { env } = options;
  const [npm, pip, apt] = await Promise.all([
    npmRegistries(env),
    pipIndexes(env),
    aptSources(options.aptDir ?? '/etc/apt'),
  ]);
  const sources = { npm, pip, apt };
  return { sources, hosts: hostsOf([...npm, ...pip, ...apt]) };
}

/** The lower-case host names of the http(s) URLs, each once. */
export function hostsOf(urls: readonly string[]): string[] {
  const hosts = new Set<string>();
  for (const url of urls) {
    const parsed = URL.parse(url);
    if (parsed && (parsed.protocol === 'http:' || parsed.protocol === 'https:'))
      hosts.add(parsed.hostname.toLowerCase());
  }
  return [...hosts];
}

/** npm's registry and every scoped one (`@scope:registry`), as npm resolves its settings. */
async function npmRegistries(env: NodeJS.ProcessEnv): Promise<string[]> {
  const listed = await output('npm', ['config', 'list', '--json'], env);
  if (!listed) return [];
  const settings = JSON.parse(listed) as Record<string, unknown>;
  return Object.entries(settings)
    .filter(([key, value]) => (key === 'registry' || key.endsWith(':registry')) && typeof value === 'string')
    .map(([, value]) => value as string);
}

/**
 * pip's index and extra indexes as pip resolves its settings (`pip config list` shows its files'
 * and its `PIP_*` variables'), and, where no index is set, pip's own default index and the host it
 * downloads files from, asked of pip itself.
 */
async function pipIndexes(env: NodeJS.ProcessEnv): Promise<string[]> {
  const configured = await output('python3', ['-m', 'pip', 'config', 'list'], env);
  if (configured === undefined) return [];
  const indexes = parsePipConfig(configured);
  const urls = indexes.flatMap((i) => i.urls);
  if (indexes.some((i) => i.key === 'index-url')) return urls;
  const pypi = await output(
    'python3',
    [
      '-c',
      'from pip._internal.models.index import PyPI; print(PyPI.simple_url); print(PyPI.file_storage_domain)',
    ],
    env,
  );
  const defaults = (pypi ?? '')
    .split('\n')
    .filter(Boolean)
    .map((line) => (line.includes('://') ? line : `https://${line}/`));
  return [...urls, ...defaults];
}

/** `pip config list` lines (`global.index-url='…'`, `:env:.index-url='…'`): the index settings and their URLs. */
export function parsePipConfig(text: string): { key: string; urls: string[] }[] {
  const found: { key: string; urls: string[] }[] = [];
  for (const line of text.split('\n')) {
    const match = /^[^.=\s]+\.(index-url|extra-index-url)='(.*)'$/.exec(line.trim());
    if (match) found.push({ key: match[1]!, urls: match[2]!.split(/\s+/).filter(Boolean) });
  }
  return found;
}

/** The URIs of apt's enabled sources: `sources.list` and `sources.list.d/*.list` and `*.sources`. */
async function aptSources(dir: string): Promise<string[]> {
  const files = [join(dir, 'sources.list')];
  const listDir = join(dir, 'sources.list.d');
  const entries = await readdir(listDir).catch(() => [] as string[]);
  for (const name of entries.sort())
    if (name.endsWith('.list') || name.endsWith('.sources')) files.push(join(listDir, name));
  const uris: string[] = [];
  for (const file of files) {
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text === undefined) continue;
    uris.push(...(file.endsWith('.sources') ? parseDeb822Sources(text) : parseOneLineSources(text)));
  }
  return uris;
}

/** One-line sources (`deb [options] URI suite components`): the URIs. */
export function parseOneLineSources(text: string): string[] {
  const uris: string[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*/, '').trim();
    const match = /^deb(?:-src)?\s+(?:\[[^\]]*\]\s+)?(\S+)/.exec(line);
    if (match) uris.push(match[1]!);
  }
  return uris;
}

/** deb822 sources (stanzas with `URIs:`), leaving out stanzas with `Enabled: no`. */
export function parseDeb822Sources(text: string): string[] {
  const uris: string[] = [];
  for (const stanza of text.split(/\n\s*\n/)) {
    const fields = new Map<string, string>();
    for (const line of stanza.split('\n')) {
      if (line.startsWith('#')) continue;
      const match = /^([A-Za-z-]+):\s*(.*)$/.exec(line);
      if (match) fields.set(match[1]!.toLowerCase(), match[2]!.trim());
    }
    if (fields.get('enabled')?.toLowerCase() === 'no') continue;
    uris.push(...(fields.get('uris')?.split(/\s+/).filter(Boolean) ?? []));
  }
  return uris;
}

/** A tool's standard output; undefined when it is not installed or fails. */
async function output(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const { stdout } = await run(command, args, { env, timeout: toolTimeoutMs, encoding: 'utf8' });
    return stdout;
  } catch {
    return undefined;
  }
}
