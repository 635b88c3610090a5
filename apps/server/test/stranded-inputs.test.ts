import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { createIdleThread, json, transcript } from './helpers.ts';

/** Server lifetimes per database, each ending in a SIGKILL; a round on each thread per lifetime. */
const lives = 3;
const threadsPerLife = 10;

/** A small seeded generator, so a failing round can be replayed with the same moments. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Input {
  threadId: string;
  inputId: string;
  content: string;
  /** The client got its 201 (before or after the restart: it retries until it does). */
  acknowledged: boolean;
  /** A Stop was sent after its 201 (its answer may be lost to the kill): it may end cancelled. */
  stopped: boolean;
}

describe.each(testDatabases())('acknowledged inputs across server kills ($name)', (database) => {
  let deployment: Deployment | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && deployment) {
      const lines = deployment.output().split('\n');
      console.error(
        lines
          .filter((l) => !/"(incoming request|request completed)"/.test(l))
          .slice(-60)
          .join('\n'),
      );
    }
    await deployment?.close();
  });

  it('30 rounds of SIGKILL at every moment of a turn: each acknowledged input runs once or is cancelled by a Stop, none is stranded', async () => {
    const d = await startDeployment(database, {
      PADDOCK_RUNNER: 'embedded',
      PADDOCK_LEASE_TTL_MS: '900',
      PADDOCK_ADOPTION_WINDOW_MS: '1500',
      PADDOCK_LOG_LEVEL: 'warn',
    });
    deployment = d;
    await d.startServer();
    const next = random(database.name === 'postgres' ? 1010 : 2020);
    // The same threads in every lifetime: their sandboxes, booted again after each restart, are
    // up for the next lifetime's turns.
    const threads = await Promise.all(Array.from({ length: threadsPerLife }, () => createIdleThread(d)));
    const inputs: Input[] = [];

    const post = async (input: Input): Promise<number | undefined> => {
      const response = await d
        .request('POST', `/v2/tasks/${input.threadId}/inputs`, {
          body: { input_id: input.inputId, messages: [{ content: input.content }] },
        })
        .catch(() => undefined);
      // The answer counts from its status line: the kill may come before the body is read.
      void response?.text().catch(() => undefined);
      if (response?.status === 201) input.acknowledged = true;
      return response?.status;
    };
    const input = (threadId: string, content: string): Input => {
      const created = { threadId, inputId: randomUUID(), content, acknowledged: false, stopped: false };
      inputs.push(created);
      return created;
    };

    for (let life = 0; life < lives; life++) {
      // Turns of different lengths, so the kill finds them starting, mid-way, near their end or over.
      const turns = threads.map((threadId, i) =>
        input(threadId, `::sleep ${200 + Math.floor(next() * 2400)}\nwork ${life}-${i}`),
      );
      for (const turn of turns) expect(await post(turn)).toBe(201);
      const followUps = threads.map((threadId, i) => input(threadId, `follow-up ${life}-${i}`));
      // Half the follow-ups arrive at random moments before the kill (one followed by a Stop); the
      // other half all at once at the kill, which comes right after the first of their 201s, so
      // some are answered just before it and others are cut off in flight.
      const early = followUps.filter((_, i) => i % 2 === 0);
      const atKill = followUps.filter((_, i) => i % 2 === 1);
      const posting = early.map(async (followUp, i) => {
        await sleep(Math.floor(next() * 1600));
        if ((await post(followUp)) === 201 && i === 0) {
          // Its answer may be lost to the kill: the inputs of this thread may end cancelled.
          for (const stopped of [followUp, turns[0]!]) stopped.stopped = true;
          const stop = await d
            .request('POST', `/v2/tasks/${followUp.threadId}/interrupt`, { body: {} })
            .catch(() => undefined);
          await stop?.text().catch(() => undefined);
        }
      });
      await sleep(400 + Math.floor(next() * 1400));
      const firstAnswer = Promise.any(atKill.map((f) => post(f).then((s) => s ?? Promise.reject())));
      await Promise.race([firstAnswer.catch(() => undefined), sleep(2000)]);
      await d.killServer('SIGKILL');
      await Promise.allSettled(posting);
      await d.startServer();
      // A client that got no answer retries with the same input_id until it gets its 201 (409 while
      // the dead server's lease runs out).
      await Promise.all(
        followUps
          .filter((f) => !f.acknowledged)
          .map(async (f) => {
            const until = Date.now() + 30_000;
            while ((await post(f)) !== 201) {
              if (Date.now() > until) throw new Error(`no 201 for ${f.content}`);
              await sleep(100);
            }
          }),
      );
      await Promise.all(threads.map((threadId) => atRest(d, threadId)));
      for (const each of [...turns, ...followUps]) await expectDeliveredOnceOrCancelled(d, each);
    }
    expect(inputs).toHaveLength(lives * threadsPerLife * 2);
  }, 240_000);
});

/**
 * Waits until the thread has no running or queued turn left; with a stranded input that is a
 * thread at rest with the input still `queued`, which the assertions then name.
 */
async function atRest(d: Deployment, threadId: string): Promise<void> {
  const until = Date.now() + 40_000;
  for (;;) {
    const thread = await json<{ status: string }>(await d.request('GET', `/v2/threads/${threadId}`), 200);
    if (thread.status !== 'running') return;
    if (Date.now() > until) throw new Error(`thread ${threadId} still running`);
    await sleep(100);
  }
}

async function expectDeliveredOnceOrCancelled(d: Deployment, round: Input): Promise<void> {
  expect(round.acknowledged, round.content).toBe(true);
  const receipt = await json<{ status: string }>(
    await d.request('GET', `/v2/tasks/${round.threadId}/inputs/${round.inputId}`),
    200,
  );
  const delivered = (await transcript(d, round.threadId)).filter((c) => c === round.content);
  if (receipt.status === 'cancelled') {
    expect(round.stopped, `${round.content} cancelled without a Stop`).toBe(true);
    expect(delivered, round.content).toHaveLength(0);
  } else {
    expect(receipt.status, round.content).toBe('submitted');
    expect(delivered, round.content).toHaveLength(1);
  }
}
