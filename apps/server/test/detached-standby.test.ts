import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';
import { everythingEntry } from './mcp-everything.ts';

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
    expect(await commandOutputs(threadId)).toContain(`ahead ${threadId}`);

    // A thread whose agent has MCP servers (given when a session opens) ends the program the next
    // standby started, and starts its own (its shells have no BASH_ENV).
    const startedAhead = () => d.output().split('started ahead: coding_gamma').length - 1;
    await expect.poll(startedAhead, { timeout: 60_000 }).toBe(2);
    const everything = await everythingEntry(d);
    const { thread_id: withServers } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({
            harness: 'coding_gamma',
            model: 'scripted',
            mcp_servers: [{ name: 'everything', command: 'node', args: [everything, 'stdio'] }],
          }),
          input: `::sh echo "[\${BASH_ENV:+ahead}]"`,
        },
      }),
      201,
    );
    expect(await commandOutputs(withServers)).toContain('[]');

    async function commandOutputs(id: string): Promise<string> {
      const thread = await settled(d, id, 60_000);
      expect(thread.status, d.output().split('\n').slice(-40).join('\n')).toBe('idle');
      // A failed or interrupted call has an error and no output: say which, so a failure says why.
      const events = await allEvents(d, id);
      const ends = events.filter((e) => e.type === 'tool_call.end');
      if (ends.length === 0) return `no tool call ended; events: ${events.map((e) => e.type).join(' ')}`;
      return ends.map((e) => e.data.output ?? JSON.stringify(e.data)).join('\n');
    }
  }, 180_000);
});
