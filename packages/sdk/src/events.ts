import type { EventRecord, ThreadEvent } from '@paddock/protocol';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { errorFromResponse, networkError, type PaddockError } from './errors.ts';
import type { CallOptions, Transport } from './http.ts';
import { backoffMs, retryDelayMs, sleep } from './retry.ts';

/** An event as the stream carries it (D6): the stored event without `tool_id`. */
export type StreamedEvent = Omit<ThreadEvent, 'tool_id'>;

export interface StreamEventsOptions extends CallOptions {
  /**
   * Replay stored events after this seq first (0: the whole history). Left out: only events newer
   * than the newest stored one when the call starts.
   */
  after?: number;
  /** No byte (event or keepalive comment) for this long: the connection is taken for dead and reopened. */
  keepaliveTimeoutMs?: number;
  /** Failed connections in a row before the iterator throws (default: the client's retry attempts). */
  reconnectAttempts?: number;
}

/** The server sends a keepalive every 15 s (D6); three missed ones mean the connection is gone. */
export const defaultKeepaliveTimeoutMs = 45_000;

/** The newest stored seq of a thread (0 when it has none). */
async function newestSeq(transport: Transport, threadId: string, options: CallOptions): Promise<number> {
  const page = await transport.json<{ items: EventRecord[] }>('GET', `/v2/tasks/${threadId}/events`, {
    query: { limit: 1, desc: true },
    replaySafe: true,
    signal: options.signal,
  });
  return page.items[0]?.seq ?? 0;
}

function parseFrame(message: EventSourceMessage): StreamedEvent {
  const event = JSON.parse(message.data) as StreamedEvent;
  if (typeof event.seq !== 'number') event.seq = Number(message.id);
  return event;
}

/**
 * A thread's events, live, as an async iterator. Every connection after the first resumes with
 * `Last-Event-ID` set to the last seq yielded, so a dropped connection (an error, the server going
 * away, or no byte within the keepalive timeout) costs neither a gap nor a duplicate. Ends when the
 * signal aborts or the loop breaks; throws a `PaddockError` for an answer that is not retryable
 * (e.g. 404 `thread_not_found`) or after `reconnectAttempts` failed connections in a row.
 */
export async function* streamEvents(
  transport: Transport,
  threadId: string,
  options: StreamEventsOptions = {},
): AsyncGenerator<StreamedEvent, void, undefined> {
  const { signal } = options;
  const keepaliveMs = options.keepaliveTimeoutMs ?? defaultKeepaliveTimeoutMs;
  const retry = { ...transport.retry, attempts: options.reconnectAttempts ?? transport.retry.attempts };
  let last: number;
  try {
    last = options.after ?? (await newestSeq(transport, threadId, options));
  } catch (error) {
    if (signal?.aborted) return;
    throw error;
  }
  let failures = 0;
  while (!signal?.aborted) {
    const connection = new AbortController();
    const onAbort = () => connection.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => connection.abort(new Error('keepalive timeout')), keepaliveMs);
    };
    let error: PaddockError | undefined;
    try {
      arm();
      const response = await transport.fetch(transport.url(`/v2/threads/${threadId}/events/stream`), {
        headers: transport.headers({ accept: 'text/event-stream', 'last-event-id': String(last) }),
        signal: connection.signal,
      });
      if (!response.ok || !response.body) {
        error = await errorFromResponse(response);
      } else {
        failures = 0;
        const pending: StreamedEvent[] = [];
        const parser = createParser({ onEvent: (message) => pending.push(parseFrame(message)) });
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        // Whatever the fetch does with its body on abort, a read pending on a dead connection ends.
        connection.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}), {
          once: true,
        });
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(value);
          clearTimeout(timer);
          for (let event = pending.shift(); event; event = pending.shift()) {
            if (event.seq <= last) continue;
            last = event.seq;
            yield event;
          }
          arm();
        }
      }
    } catch (cause) {
      if (signal?.aborted) return;
      error = networkError(cause);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      connection.abort();
    }
    // The server ended the stream (it closed or restarted): reopen at once, a short backoff apart.
    if (!error) {
      await sleep(backoffMs(1, transport.retry), signal).catch(() => {});
      continue;
    }
    failures++;
    const wait = retryDelayMs(error, failures, true, retry);
    if (wait === undefined) throw error;
    await sleep(wait, signal).catch(() => {});
  }
}
