import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPostgresDatabase } from '../packages/testing/src/databases.ts';
import { freePort, start, waitForHttp } from './processes.ts';
import { percentiles } from './stats.ts';

const main = resolve(import.meta.dirname, '../apps/server/src/main.ts');

/**
 * Live delivery to many stream subscribers, on one node and spread over two nodes of one PostgreSQL
 * database: `subscribers` streams follow one thread, `messages` messages are appended to it through
 * the first node (spaced, as a conversation's are), and each subscriber's delay from an event's
 * stored time (`ts`) to its arrival is a sample. With two nodes, half the subscribers are on the
 * second node: their delays are the cross-node delivery latency.
 */
export async function measureDelivery(adminUrl: string, options: { subscribers: number; messages: number }) {
  const one = await deployment(adminUrl, 1);
  let single: number[];
  try {
    single = (await deliver(one.bases, one.token, options, () => 0)).flat();
  } finally {
    await one.stop();
  }
  const two = await deployment(adminUrl, 2);
  try {
    const bySubscriber = await deliver(two.bases, two.token, options, (i) => i % 2);
    const on = (node: number) => bySubscriber.filter((_, i) => i % 2 === node).flat();
    return {
      subscribers: options.subscribers,
      messages: options.messages,
      one_node_ms: percentilesWithP99(single),
      two_nodes_same_node_ms: percentilesWithP99(on(0)),
      two_nodes_cross_node_ms: percentilesWithP99(on(1)),
    };
  } finally {
    await two.stop();
  }
}

function percentilesWithP99(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  const p99 = sorted[Math.min(sorted.length - 1, Math.floor(0.99 * sorted.length))] ?? Number.NaN;
  return { ...percentiles(samples), p99: Math.round(p99 * 10) / 10 };
}

/** Nodes on a fresh database, started one after the other (the first migrates it). */
async function deployment(adminUrl: string, nodes: number) {
  const database = await createPostgresDatabase(adminUrl);
  const dir = mkdtempSync(join(tmpdir(), 'paddock-bench-nodes-'));
  const key = randomBytes(32).toString('hex');
  const children: ReturnType<typeof start>[] = [];
  const bases: string[] = [];
  for (let n = 0; n < nodes; n++) {
    const port = await freePort();
    const child = start([main], {
      PORT: String(port),
      DATABASE_URL: database.url,
      PADDOCK_DATA_DIR: join(dir, `node-${n}`),
      PADDOCK_SECRET_KEY: key,
      PADDOCK_LOG_LEVEL: 'warn',
      PADDOCK_STANDBY_SANDBOXES: '0',
    });
    children.push(child);
    bases.push(`http://127.0.0.1:${port}`);
    await waitForHttp(`${bases[n]}/healthz`, child);
  }
  const token = readFileSync(join(dir, 'node-0', 'bootstrap-token'), 'utf8').trim();
  return {
    bases,
    token,
    async stop() {
      for (const child of children) {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Each subscriber's delays, one per message (subscriber `i` follows the thread on node `nodeOf(i)`). */
async function deliver(
  bases: string[],
  token: string,
  options: { subscribers: number; messages: number },
  nodeOf: (i: number) => number,
): Promise<number[][]> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const created = await fetch(`${bases[0]}/v2/threads`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ agent: { instructions: 'bench' } }),
  });
  const { thread_id } = (await created.json()) as { thread_id: string };
  const done = new AbortController();
  const delays: number[][] = [];
  const streams = Array.from({ length: options.subscribers }, async (_, i) => {
    const mine: number[] = [];
    delays[i] = mine;
    const response = await fetch(`${bases[nodeOf(i)]}/v2/threads/${thread_id}/events/stream`, {
      headers,
      signal: done.signal,
    });
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done: ended } = await reader.read().catch(() => ({ value: undefined, done: true }));
      if (ended) return;
      buffer += value;
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!frame.includes('\nevent: user.message\n')) continue;
        const { ts } = JSON.parse(/\ndata: (.*)$/m.exec(frame)![1]!) as { ts: string };
        mine.push(Date.now() - Date.parse(`${ts.slice(0, 23)}Z`));
      }
    }
  });
  // Every subscriber connected (its keepalive comment came) before the first message.
  await new Promise((r) => setTimeout(r, 2000 + options.subscribers * 2));
  for (let m = 0; m < options.messages; m++) {
    await fetch(`${bases[0]}/v2/threads/${thread_id}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ content: `message ${m}` }], run: false }),
    });
    await new Promise((r) => setTimeout(r, 50));
  }
  const until = Date.now() + 30_000;
  while (delays.some((d) => (d?.length ?? 0) < options.messages) && Date.now() < until)
    await new Promise((r) => setTimeout(r, 100));
  done.abort();
  await Promise.allSettled(streams);
  const missing = delays.filter((d) => (d?.length ?? 0) < options.messages).length;
  if (missing > 0) throw new Error(`${missing} subscribers missed messages`);
  return delays;
}
