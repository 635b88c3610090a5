import { sandboxPssMiB } from './pss.ts';

/**
 * A burst of `count` new threads at once, each a first turn of the built-in harness with the test
 * model: how long until the last of them settled (from the first request), how the creates were
 * answered, and the PSS of all their sandboxes together once they are idle.
 */
export async function hundredThreads(base: string, token: string, count = 100) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const started = performance.now();
  const created = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const sent = performance.now();
      const response = await fetch(`${base}/v2/threads`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ agent: { instructions: `burst ${i}` }, input: `::sh echo thread ${i}` }),
      });
      const answered = performance.now() - sent;
      const { thread_id: threadId } = (await response.json()) as { thread_id: string };
      return { status: response.status, answered, threadId };
    }),
  );
  const settled = await Promise.all(created.map(({ threadId }) => idleAfter(base, token, threadId, started)));
  const right = settled.filter((each) => each.reply.includes('thread ')).length;
  const pss = sandboxPssMiB();
  return {
    threads: count,
    created_201: created.filter((each) => each.status === 201).length,
    create_answered_ms_max: Math.round(Math.max(...created.map((each) => each.answered))),
    last_first_turn_settled_ms: Math.round(Math.max(...settled.map((each) => each.at))),
    turns_right: right,
    sandboxes_pss_total_mib: Math.round(pss.reduce((sum, each) => sum + each, 0)),
    sandboxes: pss.length,
  };
}

/** When the thread's first turn settled (ms after `since`), read from its event stream, and its reply. */
async function idleAfter(base: string, token: string, threadId: string, since: number) {
  const response = await fetch(`${base}/v2/threads/${threadId}/events/stream?after=0`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`the stream of ${threadId} ended before it settled`);
    text += value;
    if (text.includes('\nevent: idle\n')) break;
  }
  const at = performance.now() - since;
  await reader.cancel();
  const reply = /event: assistant\.message\n(?:[^\n]*\n)*?data: (.*)\n/.exec(text)?.[1] ?? '';
  return { at, reply };
}
