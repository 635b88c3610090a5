import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createScriptedModel } from './scripted-model.ts';

export interface ModelRouterConfig {
  openai?: { apiKey: string; baseURL?: string };
  anthropic?: { apiKey: string };
  defaultModel?: string;
}

export interface ModelRouter {
  /** The model behind a gateway model id, or undefined when no configured route serves it. */
  resolve(modelId: string): LanguageModelV4 | undefined;
  readonly defaultModel: string;
  /** Model ids worth offering, e.g. in a model picker; `resolve` accepts any id a route serves. */
  list(): string[];
}

const defaultOpenAIModel = 'openai/gpt-4.1-mini';
const defaultAnthropicModel = 'anthropic/claude-sonnet-4-5';

/**
 * Maps gateway model ids to models: `scripted` always; `openai/<id>` and `anthropic/<id>` when
 * that upstream is configured; a bare id goes to OpenAI when configured, else Anthropic.
 */
export function createModelRouter(config: ModelRouterConfig): ModelRouter {
  const scripted = createScriptedModel();
  const openai = config.openai
    ? createOpenAI({ apiKey: config.openai.apiKey, baseURL: config.openai.baseURL })
    : undefined;
  const anthropic = config.anthropic ? createAnthropic({ apiKey: config.anthropic.apiKey }) : undefined;
  const defaultModel =
    config.defaultModel ?? (openai ? defaultOpenAIModel : anthropic ? defaultAnthropicModel : 'scripted');

  return {
    defaultModel,
    resolve(modelId) {
      if (modelId === 'scripted') return scripted;
      const slash = modelId.indexOf('/');
      const prefix = slash === -1 ? '' : modelId.slice(0, slash);
      const rest = modelId.slice(slash + 1);
      if (prefix === 'openai') return openai && rest ? openai.chat(rest) : undefined;
      if (prefix === 'anthropic') return anthropic && rest ? anthropic.languageModel(rest) : undefined;
      if (!modelId) return undefined;
      if (openai) return openai.chat(modelId);
      return anthropic?.languageModel(modelId);
    },
    list() {
      const ids = ['scripted', defaultModel];
      if (openai) ids.push(defaultOpenAIModel);
      if (anthropic) ids.push(defaultAnthropicModel);
      return [...new Set(ids)];
    },
  };
}
