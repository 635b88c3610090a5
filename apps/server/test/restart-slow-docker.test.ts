import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, eventSeen, json, settled, stopTask } from './helpers.ts';

/**
 * A Docker engine at a loopback address, with no image: it answers at once until `slow()`, then
 * `/_ping` after a second (within the probe's time) and an image lookup only when it is closed, so
 * a server started after that never has its first Docker probe in.
 */
async function startSlowEngine() {
  let slow = false;
  let pending = 0;
  const held: (() => void)[] = [];
  const server = createServer((request, response) => {
    pending++;
    const answer = () => {
      pending--;
      if (request.url === '/_ping') response.end('OK');
      else response.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"no such image"}');
    };
    if (!slow) answer();
    else if (request.url === '/_ping') setTimeout(answer, 1000);
    else held.push(answer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    dockerHost: `tcp://127.0.0.1:${(server.address() as AddressInfo).port}`,
    slow() {
      slow = true;
    },
    /** How many requests it has not answered yet. */
    pending: () => pending,
    async close() {
      for (const answer of held.splice(0)) answer();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe.each(testDatabases())('a restart while the Docker engine answers slowly ($name)', (database) => {
  let deployment: Deployment | undefined;
  let engine: Awaited<ReturnType<typeof startSlowEngine>> | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail')
      console.error(deployment?.output().split('\n').slice(-60).join('\n'));
    await engine?.close();
    await deployment?.close();
  });

  it('adopts the turn of a detached runner that reconnects at once, and a Stop on it succeeds', async () => {
    engine = await startSlowEngine();
    const d = await startDeployment(database, { DOCKER_HOST: engine.dockerHost });
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), messages: [{ content: '::sh sleep 30' }] },
      }),
      201,
    );
    await eventSeen(d, threadId, 'tool_call.start');

    engine.slow();
    await d.killServer('SIGKILL');
    await d.startServer();
    // The runner retries every 250 ms: it is back while the new server's Docker probe waits.
    await d.runnerConnected(2);
    await expect.poll(() => d.output(), { timeout: 10_000 }).toContain('"msg":"adopted a running turn"');
    expect(engine.pending()).toBeGreaterThan(0);

    await json(await stopTask(d, threadId, {}), 200);
    expect((await settled(d, threadId)).status).toBe('idle');
    const ended = (await allEvents(d, threadId)).filter((e) => e.type === 'turn.ended');
    expect(ended.map((e) => e.data)).toEqual([{ stop_reason: 'cancelled' }]);
    // All the while, the new server's first Docker probe waited for the engine.
    expect(engine.pending()).toBeGreaterThan(0);
  }, 60_000);
});
