import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec, json, transcript } from './helpers.ts';

/** Server lifetimes per database; each one runs `threadsPerLife` rounds and ends in a SIGKILL. */
const lives = 5;
const threadsPerLife = 10;

/** A small seeded generator, so a failing round can be replayed with the same moments. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

interface Round {
  threadId: string;
  inputId: string;
  content: string;
  /** The client got its 201 (before or after the restart: it retries until it does). */
  acknowledged: boolean;
  /** A Stop was sent after the input's 201 (its answer may be lost to the kill): the input may end cancelled instead. */
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

  it('50 rounds of SIGKILL at every moment of a turn: each acknowledged input runs once or is cancelled by a Stop, none is stranded', async () => {
    const d = await startDeployment(database, {
      PADDOCK_RUNNER: 'embedded',
      PADDOCK_LEASE_TTL_MS: '900',
      PADDOCK_ADOPTION_WINDOW_MS: '1500',
      PADDOCK_LOG_LEVEL: 'warn',
    });
    deployment = d;
    await d.startServer();
    const next = random(database.name === 'postgres' ? 1010 : 2020);
    const rounds: Round[] = [];

    const post = async (round: Round): Promise<number | undefined> => {
      const response = await d
        .request('POST', `/v2/tasks/${round.threadId}/inputs`, {
          body: { input_id: round.inputId, messages: [{ content: round.content }] },
        })
        .catch(() => undefined);
      await response?.text().catch(() => undefined);
      if (response?.status === 201) round.acknowledged = true;
      return response?.status;
    };

    const t0 = Date.now();
    const mark = (what: string) => console.log(`${database.name} ${Date.now() - t0} ms ${what}`);
    for (let life = 0; life < lives; life++) {
      mark(`life ${life}`);
      const batch = await Promise.all(
        Array.from({ length: threadsPerLife }, async (_, i) => {
          // First turns of different lengths, so the kill finds them starting, mid-way, near their
          // end or over.
          const sleepMs = 200 + Math.floor(next() * 2400);
          const { thread_id } = await json<{ thread_id: string }>(
            await d.request('POST', '/v2/threads', {
              body: { agent: agentSpec(), messages: [{ content: `::sleep ${sleepMs}\nfirst ${life}-${i}` }] },
            }),
            201,
          );
          const round: Round = {
            threadId: thread_id,
            inputId: randomUUID(),
            content: `follow-up ${life}-${i}`,
            acknowledged: false,
            stopped: false,
          };
          return round;
        }),
      );
      rounds.push(...batch);
      // Half the inputs arrive at random moments before the kill (a few followed by a Stop); the
      // other half all at once at the kill, which comes right after the first of their 201s, so
      // some are answered just before it and others are cut off in flight.
      const early = batch.filter((_, i) => i % 2 === 0);
      const atKill = batch.filter((_, i) => i % 2 === 1);
      const posting = early.map(async (round, i) => {
        await sleep(Math.floor(next() * 1600));
        if ((await post(round)) === 201 && i === 0) {
          round.stopped = true;
          const stop = await d
            .request('POST', `/v2/tasks/${round.threadId}/interrupt`, { body: {} })
            .catch(() => undefined);
          await stop?.text().catch(() => undefined);
        }
      });
      await sleep(400 + Math.floor(next() * 1400));
      const firstAnswer = Promise.any(atKill.map((round) => post(round).then((s) => s ?? Promise.reject())));
      await Promise.race([firstAnswer.catch(() => undefined), sleep(2000)]);
      await d.killServer('SIGKILL');
      mark('killed');
      await Promise.allSettled(posting);
      await d.startServer();
      mark('started');
      // A client that got no answer retries with the same input_id until it gets its 201 (409 while
      // the dead server's lease runs out).
      await Promise.all(
        batch
          .filter((round) => !round.acknowledged)
          .map(async (round) => {
            const until = Date.now() + 30_000;
            while ((await post(round)) !== 201) {
              if (Date.now() > until) throw new Error(`no 201 for ${round.content}`);
              await sleep(100);
            }
          }),
      );
      mark('acknowledged');
      await Promise.all(batch.map((round) => settledWithInputs(d, round)));
      mark('settled');
      for (const round of batch) await expectDeliveredOnceOrCancelled(d, round);
    }
    expect(rounds).toHaveLength(lives * threadsPerLife);
  }, 240_000);
});

/**
 * Waits until the thread has no running or queued turn left; with a stranded input that is a
 * thread at rest with the input still `queued`, which the assertions then name.
 */
async function settledWithInputs(d: Deployment, round: Round): Promise<void> {
  const until = Date.now() + 40_000;
  for (;;) {
    const thread = await json<{ status: string }>(
      await d.request('GET', `/v2/threads/${round.threadId}`),
      200,
    );
    if (thread.status !== 'running') return;
    if (Date.now() > until) throw new Error(`thread of ${round.content} still running`);
    await sleep(100);
  }
}

async function expectDeliveredOnceOrCancelled(d: Deployment, round: Round): Promise<void> {
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
