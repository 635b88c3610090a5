import {
  type ComponentFile,
  type ManifestComponent,
  type ManifestWarning,
  type McpServerView,
  mcpServerSchema,
  type PublishedComponent,
  skillSchema,
} from '@paddock/protocol';
import type { NormalizedSpec } from '../agents/normalize-spec.ts';
import { componentHash } from './component-hash.ts';

type Skill = NormalizedSpec['skills'][number];
type McpServer = NormalizedSpec['mcp_servers'][number];

/**
 * How the runtime spec's instructions, skills and MCP servers appear as manifest components, and
 * back. Each is one file: `instructions.md`, a skill's `skill.json` (`{"source": "registry:…"}`),
 * an MCP server's `server.json` (its config without the name, which is the component's; header and
 * env values by name only, `header_names` and `env_names`, which a publish reads as "keep these").
 */
export const instructionsFile = 'instructions.md';
export const skillFile = 'skill.json';
export const mcpServerFile = 'server.json';

function component(type: ManifestComponent['type'], name: string, files: ComponentFile[]): ManifestComponent {
  return { type, name, files, hash: componentHash(type, name, files) };
}

const jsonFile = (path: string, value: unknown): ComponentFile => ({
  path,
  content: `${JSON.stringify(value, null, 2)}\n`,
});

export function instructionsComponent(instructions: string): ManifestComponent {
  return component('instructions', 'instructions', [{ path: instructionsFile, content: instructions }]);
}

/** A registry skill is named `<creator>/<slug>`, its version pin in the file. */
export function skillName(source: string): string {
  return source.replace(/^registry:/, '').replace(/@.*$/, '');
}

export function skillComponent(skill: Skill): ManifestComponent {
  return component('skill', skillName(skill.source), [jsonFile(skillFile, { source: skill.source })]);
}

export function mcpServerComponent(server: McpServerView): ManifestComponent {
  const { name, ...config } = server;
  return component('mcp_server', name, [jsonFile(mcpServerFile, config)]);
}

/** A published component read back into the spec, or why it cannot be. */
type Read<T> = { value: T } | { warning: ManifestWarning };

const unrepresentable = (c: PublishedComponent, code: string, message: string) => ({
  warning: { type: c.type, name: c.name, code, message },
});

/** The one file a component must consist of, or undefined. */
function onlyFile(c: PublishedComponent, path: string): string | undefined {
  return c.files.length === 1 && c.files[0].path === path ? c.files[0].content : undefined;
}

export function readInstructions(c: PublishedComponent): Read<string> {
  const content = onlyFile(c, instructionsFile);
  if (c.name !== 'instructions' || content === undefined)
    return unrepresentable(
      c,
      'invalid_instructions',
      `instructions are one component named "instructions" with one file, ${instructionsFile}`,
    );
  return { value: content };
}

export function readSkill(c: PublishedComponent): Read<Skill> {
  const parsed = skillSchema.safeParse(parseJson(onlyFile(c, skillFile)));
  if (!parsed.success || skillName(parsed.data.source) !== c.name)
    return unrepresentable(
      c,
      'skill_not_registry',
      `only registry skills can be stored: one file, ${skillFile}, holding {"source": "registry:<creator>/<slug>[@<version>]"} for a skill named <creator>/<slug>`,
    );
  return { value: parsed.data };
}

/**
 * `current` is the agent's server of that name, values opened: the values of the `header_names` and
 * `env_names` a pulled `server.json` lists are kept from it (values given in `headers`/`env` win).
 */
export function readMcpServer(c: PublishedComponent, current?: McpServer): Read<McpServer> {
  const config = parseJson(onlyFile(c, mcpServerFile));
  if (config === null || typeof config !== 'object' || Array.isArray(config))
    return unrepresentable(
      c,
      'invalid_mcp_server',
      `an MCP server is one file, ${mcpServerFile}, holding a JSON object`,
    );
  const { header_names, env_names, ...named } = config as Record<string, unknown>;
  for (const [field, names] of [
    ['headers', header_names],
    ['env', env_names],
  ] as const) {
    if (names === undefined) continue;
    const stored = current?.[field] ?? {};
    const missing = Array.isArray(names) ? names.filter((n) => stored[n] === undefined) : [];
    const given = (named[field] ?? {}) as Record<string, unknown>;
    if (!Array.isArray(names) || missing.some((n) => given[n] === undefined))
      return unrepresentable(
        c,
        'invalid_mcp_server',
        `${mcpServerFile}: ${field === 'headers' ? 'header_names' : 'env_names'} must list names the server already has a value for (give new ones in ${field})`,
      );
    const kept = Object.fromEntries(names.map((n: string) => [n, stored[n]]));
    named[field] = { ...kept, ...given };
  }
  if (named.name !== undefined && named.name !== c.name)
    return unrepresentable(
      c,
      'invalid_mcp_server',
      `${mcpServerFile} names another server (${String(named.name)})`,
    );
  const parsed = mcpServerSchema.safeParse({ ...named, name: c.name });
  if (!parsed.success)
    return unrepresentable(
      c,
      'invalid_mcp_server',
      `${mcpServerFile} is not a server config: ${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}`,
    );
  return { value: parsed.data };
}

function parseJson(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
