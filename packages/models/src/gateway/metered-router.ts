import type { LanguageModelV4StreamPart, LanguageModelV4Usage } from '@ai-sdk/provider';
import { wrapLanguageModel } from 'ai';
import type { ModelRouter } from '../model-router.ts';

export interface CallUsage {
  /** The model id the client asked for. */
  model: string;
  inputTokens: number;
  outputTokens: number;
}

/**
 * The router with every model it resolves counting its calls: `record` gets each call's usage, and
 * a stream's end (its `finish` part) waits for it, so the usage is counted before the client sees
 * the call end. Every dialect's handler takes the router, so usage is counted whatever the dialect.
 */
export function meteredRouter(
  router: Pick<ModelRouter, 'resolve'>,
  record: (usage: CallUsage) => Promise<void>,
): Pick<ModelRouter, 'resolve'> {
  return {
    resolve(modelId) {
      const model = router.resolve(modelId);
      if (!model) return undefined;
      const count = (usage: LanguageModelV4Usage) =>
        record({
          model: modelId,
          inputTokens: usage.inputTokens.total ?? 0,
          outputTokens: usage.outputTokens.total ?? 0,
        });
      return wrapLanguageModel({
        model,
        middleware: {
          async wrapGenerate({ doGenerate }) {
            const result = await doGenerate();
            await count(result.usage);
            return result;
          },
          async wrapStream({ doStream }) {
            const result = await doStream();
            const counted = new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
              async transform(part, controller) {
                if (part.type === 'finish') await count(part.usage);
                controller.enqueue(part);
              },
            });
            return { ...result, stream: result.stream.pipeThrough(counted) };
          },
        },
      });
    },
  };
}
