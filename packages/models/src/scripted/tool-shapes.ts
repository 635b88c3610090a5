import { posix } from 'node:path';
import type { JSONSchema7 } from '@ai-sdk/provider';

/** A tool the call offered: its name and, for a function tool, its input schema. */
export interface OfferedTool {
  name: string;
  /** What the tool says of itself: some programs list their skills only here (Qwen Code's `skill` tool). */
  description?: string;
  inputSchema?: JSONSchema7;
}

export type ShapedCall = { toolName: string; input: Record<string, unknown> };

// The shell and file-write tools of the harnesses Paddock runs, most specific first: Paddock's own,
// Claude Code's, Codex's, Gemini CLI's and Qwen's, OpenCode's, pi's, and other common names.
const shellTools = [
  'shell',
  'Bash',
  'bash',
  'exec_command',
  'shell_command',
  'run_shell_command',
  'execute',
  'Execute',
  'terminal',
];
const writeTools = ['write', 'Write', 'write_file', 'create_file', 'Create', 'writeFile'];

const commandFields = ['command', 'cmd', 'script', 'commandLine'];
const pathFields = ['path', 'file_path', 'filePath', 'absolute_path', 'filename', 'file'];
const contentFields = ['content', 'contents', 'text', 'file_text', 'data'];

/**
 * `::sh <command>` as a call of whichever shell tool the caller offered, shaped to its schema: the
 * command in its command field (as `["bash", "-lc", command]` where that field is an array, as
 * Codex's `shell` takes it), and any other field the schema requires filled with a neutral value.
 * Without a shell tool, the reason, in words.
 */
export function shellCall(command: string, offered: OfferedTool[]): ShapedCall | string {
  const tool = pick(shellTools, offered);
  if (!tool) return `::sh: no shell tool was offered (offered: ${names(offered)})`;
  const properties = propertiesOf(tool);
  const field = commandFields.find((name) => name in properties) ?? 'command';
  const value = properties[field]?.type === 'array' ? ['bash', '-lc', command] : command;
  return { toolName: tool.name, input: withRequired(tool, { [field]: value }) };
}

/**
 * `::write <path>` … `::end` as a call of whichever file-write tool the caller offered, shaped to
 * its schema. A tool that wants an absolute path (Claude Code's, Gemini CLI's) is given a relative
 * path as is only when no shell can write it; with a shell, and without any write tool, the file is
 * written by the shell in its working directory.
 */
export function writeCall(path: string, content: string, offered: OfferedTool[]): ShapedCall | string {
  const tool = pick(writeTools, offered);
  const properties = tool ? propertiesOf(tool) : {};
  const pathField = pathFields.find((name) => name in properties) ?? 'path';
  const wantsAbsolute = wantsAbsolutePath(pathField, properties[pathField]);
  if (tool && !(wantsAbsolute && !path.startsWith('/') && pick(shellTools, offered))) {
    const contentField = contentFields.find((name) => name in properties) ?? 'content';
    return { toolName: tool.name, input: withRequired(tool, { [pathField]: path, [contentField]: content }) };
  }
  const viaShell = shellCall(shellWrite(path, content), offered);
  return typeof viaShell === 'string'
    ? `::write: no file-write or shell tool was offered (offered: ${names(offered)})`
    : viaShell;
}

/**
 * Whether a write tool's path field takes only absolute paths: `absolute_path`, or `file_path`
 * unless its description says otherwise (Claude Code's says "absolute"; Gemini CLI's `write_file`,
 * which resolves a relative path in its workspace, does not).
 */
function wantsAbsolutePath(field: string, schema: JSONSchema7 | undefined): boolean {
  if (field === 'absolute_path') return true;
  if (field !== 'file_path') return false;
  return schema?.description === undefined || /absolute/i.test(schema.description);
}

/**
 * A shell command that writes `content` to `path` exactly (a quoted here-document). Its folder is
 * made on a line of its own, named literally: Gemini CLI refuses a command holding `$(…)`, and
 * Claude Code's Bash refuses a here-document joined by `&&` or a `$(…)` ("Parser did not consume
 * trailing input") unless its permissions are bypassed.
 */
function shellWrite(path: string, content: string): string {
  let fence = 'PADDOCK_EOF';
  while (content.includes(fence)) fence += '_';
  const folder = posix.dirname(path);
  const mkdir = folder === '.' || folder === '/' ? '' : `mkdir -p ${shellQuoted(folder)}\n`;
  // A `::write` body is empty or ends with a newline, so the here-document holds it exactly.
  return `${mkdir}cat > ${shellQuoted(path)} <<'${fence}'\n${content}${fence}\n`;
}

function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

function pick(preferred: string[], offered: OfferedTool[]): OfferedTool | undefined {
  for (const name of preferred) {
    const tool = offered.find((t) => t.name === name);
    if (tool) return tool;
  }
  return undefined;
}

function propertiesOf(tool: OfferedTool): Record<string, JSONSchema7> {
  return (tool.inputSchema?.properties ?? {}) as Record<string, JSONSchema7>;
}

/** Fills each field the schema requires and `input` lacks: a description in words, else a neutral value. */
function withRequired(tool: OfferedTool, input: Record<string, unknown>): Record<string, unknown> {
  const properties = propertiesOf(tool);
  const filled = { ...input };
  for (const name of tool.inputSchema?.required ?? []) {
    if (name in filled) continue;
    const type = properties[name]?.type;
    if (/desc/i.test(name)) filled[name] = 'run by the scripted model';
    else if (type === 'boolean') filled[name] = false;
    else if (type === 'number' || type === 'integer') filled[name] = 0;
    else if (type === 'array') filled[name] = [];
    else if (type === 'object') filled[name] = {};
    else filled[name] = '';
  }
  return filled;
}

function names(offered: OfferedTool[]): string {
  return offered.map((t) => t.name).join(', ') || 'none';
}
