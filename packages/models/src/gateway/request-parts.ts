import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { reasoningEfforts } from '@paddock/protocol';

/**
 * A tool call's JSON arguments as every dialect sends them back. Models sometimes emit malformed
 * arguments; they are passed back as they were rather than reject the history.
 */
export function parseArguments(args: string): unknown {
  try {
    return JSON.parse(args || '{}');
  } catch {
    return args;
  }
}

/** A reasoning effort the AI SDK knows; any other value is ignored, as unserved fields are. */
export function reasoningOf(effort: string | null | undefined): LanguageModelV4CallOptions['reasoning'] {
  return (reasoningEfforts as readonly string[]).includes(effort ?? '')
    ? (effort as (typeof reasoningEfforts)[number])
    : undefined;
}
