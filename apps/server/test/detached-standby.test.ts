import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

// One database: the runner's standbys are the subject; the store's own tests run on both.
const [database] = testDatabases();

describe(`a detached runner's standby sandboxes (${database!.name})`, () => {
  let deployment: Deployment | undefined;
  afterAll(async () => {
    await deployment?.close();
  });

  it('start the programs PADDOCK_STANDBY_HARNESSES names, with the deployment’s profiles, for the next thread to take', async () => {
    const d = await startDeployment(database!, {
      PADDOCK_RUNNER: 'detached',
      PADDOCK_STANDBY_HARNESSES: 'coding_gamma',
    });
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);
    await expect.poll(() => d.output(), { timeout: 60_000 }).toContain('started ahead: coding_gamma');

    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({ harness: 'coding_gamma', model: 'scripted' }),
          // BASH_ENV is in the environment only of a program a standby started.
          input: `::sh echo "\${BASH_ENV:+ahead} $PADDOCK_THREAD_ID"`,
        },
      }),
      201,
    );
    const thread = await settled(d, threadId, 60_000);
    const events = await allEvents(d, threadId);
    expect(thread.status, d.output().split('\n').slice(-40).join('\n')).toBe('idle');
    const outputs = events.filter((e) => e.type === 'tool_call.end').map((e) => e.data.output);
    expect(outputs.join('\n')).toContain(`ahead ${threadId}`);
  }, 120_000);
});
