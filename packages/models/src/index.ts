export type { ChatRequest } from './gateway/chat-request.ts';
export { chatRequestSchema, toCallOptions } from './gateway/chat-request.ts';
export type { ChatCompletion, ChatCompletionChunk } from './gateway/chat-response.ts';
export { createChunkEncoder, toChatCompletion } from './gateway/chat-response.ts';
export type { ChatCompletionsResponse } from './gateway/handle-chat-completions.ts';
export { handleChatCompletions } from './gateway/handle-chat-completions.ts';
export type { ModelRouter, ModelRouterConfig } from './model-router.ts';
export { createModelRouter } from './model-router.ts';
export { createScriptedModel } from './scripted-model.ts';
