import { recordThreadModelUsage, type Services, systemCtx, threadAgentModel } from '@paddock/core';
import type { Models } from '@paddock/harness';
import { type ModelRouter, meteredRouter, threadAgentRouter } from '@paddock/models';
import type { ThreadModels } from '@paddock/sandbox';
import { wrapLanguageModel } from 'ai';

/**
 * The models a thread's turns call in this process, when its sandbox is on a runner of this server:
 * the model router itself, with no gateway hop, metered as the gateway meters a thread token's calls
 * (each call's usage counted to the organization and as the turn's `usage` event), the `thread` id
 * served, and the turn trace marked. `services` is read at the first call: the runners are built
 * before the services.
 */
export function threadModels(router: ModelRouter, services: () => Services): ThreadModels {
  return (threadId) => (modelId) => {
    const all = services();
    const ctx = systemCtx(all, 'model-router');
    const metered = meteredRouter(router, (usage) =>
      recordThreadModelUsage(ctx, all, threadId, usage).catch((error: unknown) =>
        all.log.error({ err: error, model: usage.model }, 'model usage not recorded'),
      ),
    );
    const model = threadAgentRouter(metered, () => threadAgentModel(ctx, all, threadId)).resolve(modelId);
    return model ? traced(model, threadId, all) : unknownModel(modelId);
  };
}

/** The model with the turn trace's marks: the request made, and the first frame of its stream. */
function traced(
  model: Parameters<typeof wrapLanguageModel>[0]['model'],
  threadId: string,
  services: Services,
) {
  return wrapLanguageModel({
    model,
    middleware: {
      async wrapStream({ doStream }) {
        services.turnTrace.mark(threadId, 'model_request');
        const result = await doStream();
        let first = true;
        const marked = new TransformStream({
          transform(part, controller) {
            if (first) services.turnTrace.mark(threadId, 'model_first_chunk');
            first = false;
            controller.enqueue(part);
          },
        });
        return { ...result, stream: result.stream.pipeThrough(marked) };
      },
    },
  });
}

/** A model id no route serves: its calls fail as the gateway's 404 would, as a model error of the turn. */
function unknownModel(modelId: string): ReturnType<Models> {
  const refuse = async (): Promise<never> => {
    throw new Error(`no model ${modelId} is served by this gateway`);
  };
  return {
    specificationVersion: 'v4',
    provider: 'paddock',
    modelId,
    supportedUrls: {},
    doGenerate: refuse,
    doStream: refuse,
  };
}
