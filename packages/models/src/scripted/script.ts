import { type OfferedTool, type ShapedCall, shellCall, writeCall } from './tool-shapes.ts';

/** What the scripted model was asked to do by one user message (D8). */
export interface Script {
  sleepMs: number;
  error?: string;
  /** Plain lines, joined with a space; empty when the message held only directives. */
  text: string;
  toolCalls: { toolName: string; input: Record<string, unknown> }[];
  /** Lines answered as they are, after the `You said:` line: `::seen`'s answer, a `::call` refused. */
  replies: string[];
  /** `::options`: the answer also reports the sampling and reasoning settings the call came with. */
  reportOptions: boolean;
}

const outcomeStatuses = new Set(['success', 'fail', 'need_more_info']);
const verdicts = new Set(['pass', 'fail']);

/** What the prompt held besides the message itself. */
export interface ScriptContext {
  /** The text of the prompt before the message (system text and tool results included): `::expect` and `::seen` look in it. */
  earlier?: string;
  /** The tools the call offered: `::call` calls only one of these; `::sh` and `::write` pick theirs; `::seen` reads their descriptions. */
  offered?: OfferedTool[];
}

export function parseScript(message: string, { earlier = '', offered = [] }: ScriptContext = {}): Script {
  const script: Script = { sleepMs: 0, text: '', toolCalls: [], replies: [], reportOptions: false };
  const plain: string[] = [];
  const lines = message.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const [directive, rest] = splitDirective(line);
    if (directive === '::sh' && rest) {
      addCall(script, shellCall(rest, offered));
    } else if (directive === '::write' && rest) {
      const body: string[] = [];
      // Keep the body's own indentation: only the directive lines are trimmed.
      while (i + 1 < lines.length && lines[i + 1].trim() !== '::end') body.push(lines[++i]);
      i++;
      const content = body.length > 0 ? `${body.join('\n')}\n` : '';
      addCall(script, writeCall(rest, content, offered));
    } else if (directive === '::sleep' && /^\d+$/.test(rest)) {
      script.sleepMs += Number(rest);
    } else if (directive === '::error') {
      script.error ??= rest || 'scripted model error';
    } else if (directive === '::outcome' && outcomeStatuses.has(rest.split(' ')[0])) {
      const [status, ...summary] = rest.split(' ');
      script.toolCalls.push({
        toolName: 'report_outcome',
        input: { status, summary: summary.join(' ').trim() },
      });
    } else if (directive === '::verdict' && verdicts.has(rest.split(' ')[0])) {
      const [verdict, ...reason] = rest.split(' ');
      script.toolCalls.push({
        toolName: 'report_verdict',
        input: { passed: verdict === 'pass', reason: reason.join(' ').trim() || verdict },
      });
    } else if (directive === '::expect' && rest) {
      const found = earlier.includes(rest);
      script.toolCalls.push({
        toolName: 'report_verdict',
        input: { passed: found, reason: `${found ? 'found' : 'did not find'} "${rest}" in the conversation` },
      });
    } else if (directive === '::seen' && rest) {
      // The offered tools' descriptions were sent too (a program may list its skills only there).
      const seen = earlier.includes(rest) || offered.some((tool) => tool.description?.includes(rest));
      script.replies.push(`seen: ${seen ? 'yes' : 'no'}`);
    } else if (directive === '::call' && rest) {
      addCall(script, parseCall(rest, offered));
    } else if (directive === '::options') {
      script.reportOptions = true;
    } else if (line) {
      plain.push(line);
    }
  }
  script.text = plain.join(' ');
  return script;
}

/** A call the script makes, or, where it cannot be made, the reason in words. */
function addCall(script: Script, call: ShapedCall | string): void {
  if (typeof call === 'string') script.replies.push(call);
  else script.toolCalls.push(call);
}

/**
 * `::call <tool> <json arguments>`: the call, or why it cannot be made. A script naming a tool the
 * harness did not offer, or with arguments that are not a JSON object, is answered in words rather
 * than failing the model call, so a test sees the reason in the turn's answer.
 */
function parseCall(rest: string, offered: OfferedTool[]): ShapedCall | string {
  const [, named, json] = /^(\S+)\s*(.*)$/.exec(rest) ?? ['', rest, ''];
  const toolName = offeredName(named!, offered);
  if (!offered.some((tool) => tool.name === toolName)) {
    return `::call ${toolName}: no such tool was offered (offered: ${offered.map((t) => t.name).join(', ') || 'none'})`;
  }
  let input: unknown;
  try {
    input = json ? JSON.parse(json) : {};
  } catch (error) {
    return `::call ${toolName}: the arguments are not JSON (${(error as Error).message})`;
  }
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return `::call ${toolName}: the arguments must be a JSON object`;
  }
  return { toolName, input: input as Record<string, unknown> };
}

/**
 * The tool a script names: as written, or `*<end>` for the one offered tool whose name ends so
 * (coding agents name an MCP server's tools each their own way: `mcp__srv__echo`, `srv__echo`, …).
 */
function offeredName(named: string, offered: OfferedTool[]): string {
  if (!named.startsWith('*')) return named;
  const matches = offered.filter((tool) => tool.name.endsWith(named.slice(1)));
  return matches.length === 1 ? matches[0]!.name : named;
}

function splitDirective(line: string): [string, string] {
  if (!line.startsWith('::')) return ['', line];
  const space = line.indexOf(' ');
  if (space === -1) return [line, ''];
  return [line.slice(0, space), line.slice(space + 1).trim()];
}
