import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { threadAgentModelId } from '@paddock/protocol';
import type { ModelRouter } from '../model-router.ts';

/** What the `thread` model id stands for: the calling thread's agent, as it is configured now. */
export interface ThreadAgentModel {
  /** The gateway model id of the agent's model. */
  model: string;
  instructions: string | undefined;
}

/**
 * The router with one more id for a thread's own callers: `thread` is the calling thread's agent's
 * model, its instructions put before the caller's system text. A program started before its thread
 * was known (a standby sandbox's, D9) asks for it, so the model and the instructions arrive with the
 * thread, not with the program. Without a thread (`agentOf` undefined) the id is unknown, as any other.
 * The agent is read when the call is made; the call goes through `router`, as the agent's model.
 */
export function threadAgentRouter(
  router: Pick<ModelRouter, 'resolve'>,
  agentOf: (() => Promise<ThreadAgentModel>) | undefined,
): Pick<ModelRouter, 'resolve'> {
  return {
    resolve(modelId) {
      if (modelId !== threadAgentModelId) return router.resolve(modelId);
      return agentOf && threadAgentModel(router, agentOf);
    },
  };
}

function threadAgentModel(
  router: Pick<ModelRouter, 'resolve'>,
  agentOf: () => Promise<ThreadAgentModel>,
): LanguageModelV4 {
  const target = async (options: LanguageModelV4CallOptions) => {
    const agent = await agentOf();
    const model = router.resolve(agent.model);
    if (!model) throw new Error(`the thread's model ${agent.model} is not served by this gateway`);
    const prompt = agent.instructions
      ? [{ role: 'system' as const, content: agent.instructions }, ...options.prompt]
      : options.prompt;
    return { model, options: { ...options, prompt } };
  };
  return {
    specificationVersion: 'v4',
    provider: 'paddock',
    modelId: threadAgentModelId,
    supportedUrls: {},
    async doGenerate(options) {
      const { model, options: call } = await target(options);
      return model.doGenerate(call);
    },
    async doStream(options) {
      const { model, options: call } = await target(options);
      return model.doStream(call);
    },
  };
}
