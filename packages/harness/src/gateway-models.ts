import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { Models } from './types.ts';

/**
 * The models of the Paddock gateway over HTTP, for a loop that runs where the model router is not
 * (a detached or self-hosted runner): its OpenAI-compatible endpoint at `baseURL`, with a thread's
 * token. The usage of each call is counted by the gateway as for any caller.
 */
export function gatewayModels(baseURL: string, apiKey: string): Models {
  const gateway = createOpenAICompatible({ name: 'paddock', baseURL, apiKey, includeUsage: true });
  return (modelId) => gateway.chatModel(modelId);
}
