import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4StreamPart,
} from '@ai-sdk/provider';

/**
 * What a dialect's handler answers, framework agnostic: a JSON body with its status, or (status
 * 200) server-sent event frames, each a whole `event: …\ndata: …\n\n` or `data: …\n\n` string.
 */
export type GatewayAnswer =
  | { status: number; json: unknown }
  | { status: 200; stream: AsyncIterable<string> };

/** A model stream opened far enough to know it started: a failure before any output is `error`. */
export type OpenedStream =
  | { error: unknown }
  | {
      /** The parts read so far (up to and including the first output); replay them first. */
      head: LanguageModelV4StreamPart[];
      reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
    };

/**
 * Starts a streaming model call and reads up to its first output, so that a call that fails before
 * saying anything still gets an HTTP error status rather than a 200 with an error frame.
 */
export async function openModelStream(
  model: LanguageModelV4,
  options: LanguageModelV4CallOptions,
): Promise<OpenedStream> {
  let reader: ReadableStreamDefaultReader<LanguageModelV4StreamPart>;
  try {
    reader = (await model.doStream(options)).stream.getReader();
  } catch (error) {
    return { error };
  }
  const head: LanguageModelV4StreamPart[] = [];
  try {
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      if (next.value.type === 'error') {
        void reader.cancel().catch(() => {});
        return { error: next.value.error };
      }
      head.push(next.value);
      if (!['stream-start', 'response-metadata', 'raw'].includes(next.value.type)) break;
    }
  } catch (error) {
    void reader.cancel().catch(() => {});
    return { error };
  }
  return { head, reader };
}

/**
 * The parts of an opened stream, head first. A read that throws ends it with an `error` part,
 * unless `signal` aborted (the client left). Leaving early cancels the upstream call.
 */
export async function* streamParts(
  opened: Exclude<OpenedStream, { error: unknown }>,
  signal: AbortSignal,
): AsyncGenerator<LanguageModelV4StreamPart> {
  try {
    yield* opened.head;
    for (;;) {
      let next: ReadableStreamReadResult<LanguageModelV4StreamPart>;
      try {
        next = await opened.reader.read();
      } catch (error) {
        if (!signal.aborted) yield { type: 'error', error };
        return;
      }
      if (next.done) return;
      yield next.value;
    }
  } finally {
    void opened.reader.cancel().catch(() => {});
  }
}

/** One server-sent event frame; `event` is set for dialects that name their events. */
export function sseFrame(data: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`;
}
