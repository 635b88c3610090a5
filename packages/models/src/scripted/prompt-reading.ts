import type { LanguageModelV4Prompt, LanguageModelV4ToolResultPart } from '@ai-sdk/provider';

export interface AnsweredToolCall {
  toolName: string;
  input: unknown;
  result: LanguageModelV4ToolResultPart['output'];
}

/**
 * The script: the last text part of the newest user message. Coding agents put context of their own
 * (Claude Code's `<system-reminder>` blocks, Gemini CLI's `<session_context>`) in text parts before
 * the user's text; those count as earlier text.
 */
export function newestUserText(prompt: LanguageModelV4Prompt): string {
  const newest = newestUserIndex(prompt);
  return newest === -1 ? '' : (textsOf(prompt[newest]!).at(-1) ?? '');
}

/**
 * Text of everything sent before the script, newline-joined: every earlier message (system text,
 * and the arguments and results of tool calls too, since a harness's context is as much what its
 * tools answered as what was said), and the newest user message's other text parts.
 */
export function textBeforeNewestUser(prompt: LanguageModelV4Prompt): string {
  const newest = newestUserIndex(prompt);
  const earlier = (newest === -1 ? prompt : prompt.slice(0, newest)).flatMap((message) => {
    if (message.role === 'system') return [message.content];
    return message.content.flatMap((part) => {
      if (part.type === 'text') return [part.text];
      if (part.type === 'tool-call') return [JSON.stringify(part.input ?? null)];
      if (part.type === 'tool-result') return [resultText(part.output)];
      return [];
    });
  });
  if (newest !== -1) earlier.push(...textsOf(prompt[newest]!).slice(0, -1));
  return earlier.join('\n');
}

function newestUserIndex(prompt: LanguageModelV4Prompt): number {
  return prompt.findLastIndex((message) => message.role === 'user');
}

function textsOf(message: LanguageModelV4Prompt[number]): string[] {
  if (message.role === 'system') return [message.content];
  return message.content.flatMap((part) => (part.type === 'text' ? [part.text] : []));
}

function resultText(output: LanguageModelV4ToolResultPart['output']): string {
  if (output.type === 'text' || output.type === 'error-text') return output.value;
  if (output.type === 'json' || output.type === 'error-json') return JSON.stringify(output.value);
  if (output.type === 'content')
    return output.value.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  return output.reason ?? '';
}

/** Tool calls made since the newest user message, paired with their results, in call order. */
export function answeredToolCalls(prompt: LanguageModelV4Prompt): AnsweredToolCall[] {
  let start = 0;
  for (let i = prompt.length - 1; i >= 0; i--) {
    if (prompt[i].role === 'user') {
      start = i + 1;
      break;
    }
  }
  const inputs = new Map<string, unknown>();
  const answered: AnsweredToolCall[] = [];
  for (const message of prompt.slice(start)) {
    if (message.role === 'assistant') {
      for (const part of message.content)
        if (part.type === 'tool-call') inputs.set(part.toolCallId, part.input);
    } else if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        answered.push({ toolName: part.toolName, input: inputs.get(part.toolCallId), result: part.output });
      }
    }
  }
  return answered;
}

/** Rough prompt size in characters, for the usage estimate. */
export function promptCharacters(prompt: LanguageModelV4Prompt): number {
  let total = 0;
  for (const message of prompt) {
    if (message.role === 'system') {
      total += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text' || part.type === 'reasoning') total += part.text.length;
      else if (part.type === 'tool-call') total += JSON.stringify(part.input ?? null).length;
      else if (part.type === 'tool-result') total += JSON.stringify(part.output).length;
    }
  }
  return total;
}
