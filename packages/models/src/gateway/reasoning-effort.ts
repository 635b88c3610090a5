import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { reasoningEfforts } from '@paddock/protocol';

/**
 * A dialect's reasoning effort as the AI SDK's `reasoning` option; a value the AI SDK does not know
 * is ignored, as fields the gateway does not serve are.
 */
export function reasoningOf(effort: string | null | undefined): LanguageModelV4CallOptions['reasoning'] {
  return (reasoningEfforts as readonly string[]).includes(effort ?? '')
    ? (effort as (typeof reasoningEfforts)[number])
    : undefined;
}
