import type {
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4TextPart,
  SharedV4ProviderOptions,
} from '@ai-sdk/provider';
import type { ModelMessage } from 'ai';

type UserPart = Exclude<Extract<ModelMessage, { role: 'user' }>['content'], string>[number];
type AssistantMessage = Extract<ModelMessage, { role: 'assistant' }>;
type AssistantPromptPart = Extract<LanguageModelV4Message, { role: 'assistant' }>['content'][number];
type ToolPromptPart = Extract<LanguageModelV4Message, { role: 'tool' }>['content'][number];

/**
 * A conversation message as a model provider takes it (the AI SDK's provider prompt), with no
 * validation: the transcript holds what this loop and its peers wrote (text, reasoning, tool calls
 * and their results), which passes as it is.
 */
export function toPromptMessage(message: ModelMessage): LanguageModelV4Message {
  const providerOptions = message.providerOptions as SharedV4ProviderOptions | undefined;
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content, providerOptions };
    case 'user':
      return {
        role: 'user',
        content:
          typeof message.content === 'string' ? [text(message.content)] : message.content.map(userPart),
        providerOptions,
      };
    case 'assistant':
      return { role: 'assistant', content: assistantParts(message), providerOptions };
    case 'tool':
      return {
        role: 'tool',
        content: message.content.filter((part) => part.type === 'tool-result') as ToolPromptPart[],
        providerOptions,
      };
  }
}

const text = (value: string): LanguageModelV4TextPart => ({ type: 'text', text: value });

/** Clients send text; a file part (none is stored today) passes as it is. */
function userPart(part: UserPart): LanguageModelV4TextPart | LanguageModelV4FilePart {
  if (part.type === 'text') return { type: 'text', text: part.text, providerOptions: part.providerOptions };
  return part as unknown as LanguageModelV4FilePart;
}

function assistantParts(message: AssistantMessage): AssistantPromptPart[] {
  if (typeof message.content === 'string') return message.content ? [text(message.content)] : [];
  // What a provider cannot take back (an approval request, a source) is not the conversation's.
  return message.content.filter((part) =>
    ['text', 'reasoning', 'tool-call', 'tool-result', 'file'].includes(part.type),
  ) as AssistantPromptPart[];
}
