import type { LanguageModelV4 } from '@ai-sdk/provider';

/**
 * A stand-in upstream model for gateway and harness tests: each call streams `stream-start` and
 * then the given parts, exactly as a provider would. (The thing under test is what consumes it.)
 */
export function streamingModel(modelId: string, parts: () => unknown[]): LanguageModelV4 {
  return {
    specificationVersion: 'v4',
    provider: 'test',
    modelId,
    supportedUrls: {},
    doGenerate: () => Promise.reject(new Error('not used')),
    doStream: async () => ({
      stream: new ReadableStream({
        start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          for (const part of parts()) controller.enqueue(part as never);
          controller.close();
        },
      }),
    }),
  };
}
