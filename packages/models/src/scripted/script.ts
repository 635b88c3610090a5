/** What the scripted model was asked to do by one user message (D8). */
export interface Script {
  sleepMs: number;
  error?: string;
  /** Plain lines, joined with a space; empty when the message held only directives. */
  text: string;
  toolCalls: { toolName: string; input: Record<string, string> }[];
}

const outcomeStatuses = new Set(['success', 'fail', 'need_more_info']);

export function parseScript(message: string): Script {
  const script: Script = { sleepMs: 0, text: '', toolCalls: [] };
  const plain: string[] = [];
  const lines = message.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    const [directive, rest] = splitDirective(line);
    if (directive === '::sh' && rest) {
      script.toolCalls.push({ toolName: 'shell', input: { command: rest } });
    } else if (directive === '::write' && rest) {
      const body: string[] = [];
      // Keep the body's own indentation: only the directive lines are trimmed.
      while (i + 1 < lines.length && lines[i + 1].trim() !== '::end') body.push(lines[++i]);
      i++;
      const content = body.length > 0 ? `${body.join('\n')}\n` : '';
      script.toolCalls.push({ toolName: 'write', input: { path: rest, content } });
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
    } else if (line) {
      plain.push(line);
    }
  }
  script.text = plain.join(' ');
  return script;
}

function splitDirective(line: string): [string, string] {
  if (!line.startsWith('::')) return ['', line];
  const space = line.indexOf(' ');
  if (space === -1) return [line, ''];
  return [line.slice(0, space), line.slice(space + 1).trim()];
}
