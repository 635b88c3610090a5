/**
 * Time from a request to the first `assistant.message.chunk` on the thread's SSE stream, read
 * through a raw streaming fetch so the figure includes the whole path a client sees.
 */
async function openStream(base: string, token: string, threadId: string, after: number) {
  const response = await fetch(`${base}/v2/threads/${threadId}/events/stream?after=${after}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    /** Resolves at the next frame of this type, skipping others; answers its seq. */
    async next(type: string): Promise<number> {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (frame.includes(`\nevent: ${type}\n`)) return Number(/^id: (\d+)/.exec(frame)![1]);
          // A turn that fails never sends what is awaited: the bench stops with why.
          if (frame.includes('\nevent: error\n')) throw new Error(`the turn failed: ${frame}`);
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += value;
      }
    },
    close: () => reader.cancel(),
  };
}

/**
 * Thread create → first chunk. `pauseMs` between rounds: with a pause the server is idle when a
 * thread arrives (its standby sandbox is warm), as when a user starts a thread; without one, threads
 * arrive back to back faster than a 2-core host can warm the next standby.
 */
export async function createLatency(
  base: string,
  token: string,
  rounds: number,
  pauseMs: number,
  agent: Record<string, unknown> = {},
) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const samples: number[] = [];
  let threadId = '';
  for (let i = 0; i < rounds; i++) {
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    const started = performance.now();
    const response = await fetch(`${base}/v2/threads`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        agent: { instructions: `bench ${pauseMs} ${i}`, ...agent },
        input: 'hello from the bench',
      }),
    });
    threadId = ((await response.json()) as { thread_id: string }).thread_id;
    const stream = await openStream(base, token, threadId, 0);
    await stream.next('assistant.message.chunk');
    samples.push(performance.now() - started);
    await stream.next('idle');
    await stream.close();
  }
  return { samples, threadId };
}

export async function firstChunkLatency(base: string, token: string, rounds: number) {
  const burst = await createLatency(base, token, rounds, 0);
  const spaced = await createLatency(base, token, rounds, 1000);
  const { followUp, acknowledged } = await followUpLatency(base, token, spaced.threadId, rounds);
  return { create: spaced.samples, burst: burst.samples, followUp, acknowledged, threadId: spaced.threadId };
}

/**
 * A coding agent's create → first chunk (its program starts in the new thread's sandbox and opens
 * a session) and follow-up → first chunk (the program is running). The first thread may install
 * the program; it is left out.
 */
export async function harnessLatency(base: string, token: string, harness: string, rounds: number) {
  const agent = { harness, model: 'scripted' };
  await createLatency(base, token, 1, 0, agent);
  const create = await createLatency(base, token, rounds, 1000, agent);
  const { followUp } = await followUpLatency(base, token, create.threadId, rounds);
  return { create: create.samples, followUp };
}

/**
 * Follow-up → first chunk, and follow-up → its answer (the input stored and acknowledged, before any
 * turn runs), on one thread.
 */
async function followUpLatency(base: string, token: string, threadId: string, rounds: number) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const followUp: number[] = [];
  const acknowledged: number[] = [];
  const stream = await openStream(base, token, threadId, 0);
  await stream.next('idle');
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await fetch(`${base}/v2/threads/${threadId}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ content: `follow-up ${i}` }], run: true }),
    });
    acknowledged.push(performance.now() - started);
    await stream.next('assistant.message.chunk');
    followUp.push(performance.now() - started);
    await stream.next('idle');
  }
  await stream.close();
  return { followUp, acknowledged };
}
