import type { PaddockClient, StreamedEvent } from '@paddock/sdk';

export const agent = { instructions: 'You are a test agent.' };

/** Follows the thread's stream from `after` until an `idle` event, and answers what it saw. */
export async function untilIdle(
  client: PaddockClient,
  threadId: string,
  options: Parameters<PaddockClient['threads']['stream']>[1] = {},
): Promise<StreamedEvent[]> {
  const events: StreamedEvent[] = [];
  const signal = AbortSignal.timeout(20_000);
  for await (const event of client.threads.stream(threadId, { after: 0, signal, ...options })) {
    events.push(event);
    if (event.type === 'idle') return events;
  }
  throw new Error(`no idle on ${threadId}: ${events.map((e) => e.type).join(', ')}`);
}

/** The seqs 1..n in order: nothing missing, nothing twice. */
export function expectedSeqs(events: StreamedEvent[]): number[] {
  return events.map((_, i) => i + 1);
}

/** A `fetch` that answers `cut` instead of the real answer for requests `when` picks (after sending them). */
export function droppingFetch(when: (url: string, init: RequestInit | undefined) => boolean) {
  const sent: { url: string; body: string | undefined }[] = [];
  let dropped = 0;
  const wrapped: typeof fetch = async (input, init) => {
    const url = String(input);
    const response = await fetch(input, init);
    if (when(url, init)) {
      sent.push({ url, body: typeof init?.body === 'string' ? init.body : undefined });
      if (dropped++ === 0) {
        await response.body?.cancel();
        throw new TypeError('fetch failed: socket hang up');
      }
    }
    return response;
  };
  return { fetch: wrapped, sent };
}
