import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeploymentConfig, orgLimits } from '../src/startup/deployment-config.ts';
import { agentSpec, allEvents, json, settled, stopTask, turnStarted } from './helpers.ts';

interface Refusal {
  detail: { code: string; message: string };
}

describe.each(testDatabases())('the limit on live sandboxes on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    const config = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
    writeFileSync(config, 'limits:\n  default: { live_sandboxes: 2 }\n');
    server = await startTestServer(database, {
      PADDOCK_CONFIG: config,
      // Idle sandboxes stop soon; the ones the test needs live hold a running turn.
      PADDOCK_SANDBOX_IDLE_STOP_MS: '2000',
    });
  });
  afterAll(() => server.close());

  const create = (input?: string) =>
    server.request('POST', '/v2/threads', { body: { agent: agentSpec(), ...(input && { input }) } });
  const created = async (input: string) =>
    (await json<{ thread_id: string }>(await create(input), 201)).thread_id;
  const refused = async (response: Response) => {
    const { detail } = await json<Refusal>(response, 429);
    expect(detail.code).toBe('sandbox_limit_reached');
    expect(detail.message).toContain('limit of 2 live sandboxes');
  };
  const stopped = async (threadId: string) => {
    const done = async () =>
      (await allEvents(server, threadId)).some(
        (e) => e.type === 'sandbox.status' && (e.data as { status: string }).status === 'stopped',
      );
    await expect.poll(done, { timeout: 10_000, interval: 50 }).toBe(true);
    // It stops counting once the host released it (written beside that event).
    const released = async () =>
      (
        await server.paddock.services.store.db
          .selectFrom('live_sandboxes')
          .select('live_until')
          .where('thread_id', '=', threadId)
          .executeTakeFirstOrThrow()
      ).live_until === '';
    await expect.poll(released, { timeout: 10_000, interval: 50 }).toBe(true);
  };

  it('refuses new threads, and the boot of a stopped one, while the organization is at its limit', async () => {
    const first = await created('::sh echo one');
    const second = await created('::sh echo two');
    // Both count from creation on (their turns will boot them): a third is refused, with or without an input.
    await refused(await create('::sh echo three'));
    await refused(await create());

    // Idle sandboxes stop and stop counting.
    await settled(server, first);
    await settled(server, second);
    await stopped(first);
    await stopped(second);
    // Their turns run until stopped, so their sandboxes count however slow the machine is.
    const third = await created('::sleep 120000');
    const fourth = await created('::sleep 120000');
    await turnStarted(server, third);
    await turnStarted(server, fourth);

    // The first thread's sandbox stopped: a new input, or a file read, would boot a third one.
    const input = await server.request('POST', `/v2/tasks/${first}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: '::sh echo again' }] },
    });
    await refused(input);
    const inputs = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/tasks/${first}/inputs`),
      200,
    );
    expect(inputs.items).toHaveLength(1);
    await refused(await server.request('GET', `/v2/tasks/${first}/files`));

    // Once the others stopped, the first one boots again.
    for (const threadId of [third, fourth]) {
      await json(await stopTask(server, threadId, {}), 200);
      await settled(server, threadId);
    }
    await stopped(third);
    await stopped(fourth);
    await json(
      await server.request('POST', `/v2/tasks/${first}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: '::sh echo again' }] },
      }),
      201,
    );
    expect((await settled(server, first)).status).not.toBe('fail');
    // Six sandbox boots and four idle stops: about 11 s alone, more beside the rest of the suite.
  }, 60_000);
});

describe('limits in the deployment config', () => {
  const load = (content: string) => {
    const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
    writeFileSync(path, content);
    return loadDeploymentConfig(path);
  };

  it('applies an organization its own entry, else the default, bound by bound; unset is unlimited', () => {
    const { limits } = load(
      'limits:\n  default: { live_sandboxes: 100 }\n  organizations:\n    org-1: { live_sandboxes: 5 }\n    org-3: { running_turns: 2 }\n',
    );
    const live = orgLimits(limits, 'live_sandboxes');
    expect(live?.('org-1')).toBe(5);
    expect(live?.('org-2')).toBe(100);
    expect(live?.('org-3')).toBe(100);
    expect(orgLimits(load('providers: {}\n').limits, 'live_sandboxes')).toBeUndefined();
    expect(orgLimits(loadDeploymentConfig(undefined).limits, 'live_sandboxes')).toBeUndefined();
  });

  it('names a bad limit in one line', () => {
    expect(() => load('limits:\n  default: { live_sandboxes: -1 }\n')).toThrow(
      /limits\.default\.live_sandboxes/,
    );
    expect(() => load('limits:\n  organizations:\n    org-1: { live_sandbox: 5 }\n')).toThrow(
      /limits\.organizations\.org-1/,
    );
  });
});
