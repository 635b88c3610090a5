import type { AnsweredToolCall } from './prompt-reading.ts';

/** The short text the scripted model answers with once its tool calls have results (D8). */
export function quoteToolResults(calls: AnsweredToolCall[]): string {
  return calls.map(quoteOne).join('\n');
}

function quoteOne({ toolName, input, result }: AnsweredToolCall): string {
  if (result.type === 'error-text') return `${toolName} failed: ${result.value}`;
  if (result.type === 'error-json') return `${toolName} failed: ${JSON.stringify(result.value)}`;
  if (result.type === 'execution-denied')
    return `${toolName} was denied${result.reason ? `: ${result.reason}` : ''}`;
  const value = resultValue(result);
  const args = asRecord(input);
  if (toolName === 'shell') {
    const shell = asRecord(value);
    if (typeof shell.exit_code === 'number') {
      return `shell exited ${shell.exit_code}:\n${String(shell.output ?? '').trimEnd()}`;
    }
  }
  if (toolName === 'write' && typeof args.path === 'string') {
    // Over the OpenAI wire a tool error arrives as plain text too; a write that does not say it wrote failed.
    if (typeof value === 'string' && !value.startsWith('wrote')) return `write failed: ${value}`;
    return `wrote ${args.path}`;
  }
  if (toolName === 'report_outcome' && typeof args.status === 'string') {
    return `outcome ${args.status}: ${String(args.summary ?? '')}`;
  }
  return `${toolName}: ${typeof value === 'string' ? value : JSON.stringify(value)}`;
}

// Over the OpenAI wire a tool result is a string, so a JSON object comes back as text.
function resultValue(result: AnsweredToolCall['result']): unknown {
  if (result.type === 'json') return result.value;
  if (result.type === 'content')
    return result.value.map((part) => (part.type === 'text' ? part.text : '')).join('');
  if (result.type !== 'text') return undefined;
  try {
    return JSON.parse(result.value);
  } catch {
    return result.value;
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' ? (value as Record<string, unknown>) : {};
}
