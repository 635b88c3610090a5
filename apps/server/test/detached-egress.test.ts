import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { EventData } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

// One database: the link and the runner's proxies are the subject; the store's own tests run on both.
const [database] = testDatabases();

describe(`a detached runner's egress proxies (${database!.name})`, () => {
  let deployment: Deployment | undefined;
  let allowed: Server | undefined;
  afterAll(async () => {
    await deployment?.close();
    allowed?.close();
  });

  it('apply the policy the server sends with the boot, and report every connection over the link', async () => {
    allowed = createServer((_request, response) => response.end('hello over the link\n'));
    await new Promise<void>((resolve) => allowed!.listen(0, '127.0.0.2', resolve));
    const port = (allowed.address() as AddressInfo).port;
    const config = join(process.env.TMPDIR ?? '/tmp', `paddock-detached-egress-${process.pid}.json`);
    writeFileSync(config, JSON.stringify({ network: { allow_addresses: ['127.0.0.2'] } }));
    const d = await startDeployment(database!, { PADDOCK_RUNNER: 'detached', PADDOCK_CONFIG: config });
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);

    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({
            network: { allow: ['127.0.0.2'] },
            // Reported while the sandbox boots, before the runner has said it hosts it.
            entrypoint: 'curl -sS https://example.com/ || true',
          }),
          input: `::sh curl -sS http://127.0.0.2:${port}/; echo "allowed=$?"`,
        },
      }),
      201,
    );
    const thread = await settled(d, threadId, 60_000);
    expect(thread.status, d.output().split('\n').slice(-40).join('\n')).toBe('idle');
    const events = await allEvents(d, threadId);
    expect(String(events.find((e) => e.type === 'tool_call.end')?.data.output)).toMatch(
      /hello over the link\nallowed=0/,
    );
    await expect
      .poll(
        async () =>
          (await allEvents(d, threadId))
            .filter((e) => e.type === 'network.request')
            .map((e) => {
              const { host, allowed: ok, reason } = e.data as EventData['network.request'];
              return { host, allowed: ok, reason };
            }),
        { timeout: 10_000 },
      )
      .toEqual([
        { host: 'example.com', allowed: false, reason: "not in the agent's network policy (allow list)" },
        { host: '127.0.0.2', allowed: true, reason: undefined },
      ]);
  }, 120_000);
});
