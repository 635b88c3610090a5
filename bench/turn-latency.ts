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

export async function firstChunkLatency(base: string, token: string, rounds: number) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const create: number[] = [];
  let threadId = '';
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const response = await fetch(`${base}/v2/threads`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ agent: { instructions: `bench ${i}` }, input: 'hello from the bench' }),
    });
    threadId = ((await response.json()) as { thread_id: string }).thread_id;
    const stream = await openStream(base, token, threadId, 0);
    await stream.next('assistant.message.chunk');
    create.push(performance.now() - started);
    await stream.next('idle');
    await stream.close();
  }
  const followUp: number[] = [];
  const stream = await openStream(base, token, threadId, 0);
  await stream.next('idle');
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    await fetch(`${base}/v2/threads/${threadId}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ content: `follow-up ${i}` }], run: true }),
    });
    await stream.next('assistant.message.chunk');
    followUp.push(performance.now() - started);
    await stream.next('idle');
  }
  await stream.close();
  return { create, followUp, threadId };
}
