/** What the scripted model was asked to do by one user message (D8). */
export interface Script {
  sleepMs: number;
  error?: string;
  /** Plain lines, joined with a space; empty when the message held only directives. */
  text: string;
  toolCalls: { toolName: string; input: Record<string, unknown> }[];
  /** `::options`: the answer also reports the sampling and reasoning settings the call came with. */
  reportOptions: boolean;
}

const outcomeStatuses = new Set(['success', 'fail', 'need_more_info']);
const verdicts = new Set(['pass', 'fail']);

/**
 * `earlier` is the text of the prompt before the message (system text included), which `::expect`
 * looks in.
 */
export function parseScript(message: string, earlier = ''): Script {
  const script: Script = { sleepMs: 0, text: '', toolCalls: [], reportOptions: false };
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
    } else if (directive === '::options') {
      script.reportOptions = true;
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
