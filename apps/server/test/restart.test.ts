import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  agentSpec,
  allEvents,
  createIdleThread,
  json,
  sandboxToken,
  settled,
  transcript,
} from './helpers.ts';

interface Frame {
  id: number;
  type: string;
  data: ThreadEvent;
}

/**
 * Reads a thread's event stream (resuming after `lastEventId`) until `done` says so, or until the
 * connection is cut (the server was killed): answers the frames read.
 */
async function readStream(
  deployment: Deployment,
  threadId: string,
  options: { lastEventId: number; done(frames: Frame[]): boolean; timeoutMs?: number },
): Promise<Frame[]> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 30_000);
  const frames: Frame[] = [];
  try {
    const response = await fetch(`${deployment.url}/v2/threads/${threadId}/events/stream`, {
      headers: { authorization: `Bearer ${deployment.token}`, 'last-event-id': String(options.lastEventId) },
      signal: controller.signal,
    });
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body!) {
      buffer += decoder.decode(chunk, { stream: true });
      let end = buffer.indexOf('\n\n');
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        end = buffer.indexOf('\n\n');
        const field = (name: string) =>
          block
            .split('\n')
            .find((line) => line.startsWith(`${name}: `))
            ?.slice(name.length + 2);
        const id = field('id');
        if (id === undefined) continue;
        frames.push({ id: Number(id), type: field('event')!, data: JSON.parse(field('data')!) });
        if (options.done(frames)) return frames;
      }
    }
  } catch (error) {
    if (controller.signal.aborted) throw new Error(`stream timed out after ${frames.map((f) => f.type)}`);
    // The server went away mid-stream: what arrived is what the client has.
    void error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
  return frames;
}

const seen = (type: string) => (frames: Frame[]) => frames.some((f) => f.type === type);

/** Starts a thread whose first turn runs a shell command; answers once the command runs, with the frames so far. */
async function startShellTurn(deployment: Deployment, content: string) {
  const { thread_id: threadId } = await json<{ thread_id: string }>(
    await deployment.request('POST', '/v2/threads', {
      body: { agent: agentSpec(), messages: [{ content }] },
    }),
    201,
  );
  const before = await readStream(deployment, threadId, { lastEventId: 0, done: seen('tool_call.start') });
  return { threadId, before };
}

async function threadStatus(deployment: Deployment, threadId: string): Promise<string> {
  return (await json<{ status: string }>(await deployment.request('GET', `/v2/threads/${threadId}`), 200))
    .status;
}

function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  return vi.waitFor(
    async () => {
      if (!(await check())) throw new Error(`timed out waiting for ${what}`);
    },
    { timeout: timeoutMs, interval: 50 },
  );
}

describe.each(testDatabases())('server restarts with a detached runner ($name)', (database) => {
  let deployment: Deployment;

  async function deploy(env: Record<string, string>): Promise<Deployment> {
    deployment = await startDeployment(database, env);
    await deployment.startServer();
    deployment.startRunner();
    await deployment.runnerConnected(1);
    return deployment;
  }

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail') {
      const lines = deployment.output().split('\n');
      console.error(
        lines
          .filter((line) => !/"(incoming request|request completed)"/.test(line))
          .slice(-80)
          .join('\n'),
      );
    }
    await deployment?.close();
  });

  it.each(['SIGKILL', 'SIGTERM'] as const)(
    'adopts a turn running when the server gets %s: its events go on with no gap and the stream resumes',
    async (signal) => {
      const d = await deploy({ PADDOCK_LEASE_TTL_MS: '1500' });
      const { threadId, before } = await startShellTurn(d, '::sh sleep 3; echo survived');

      await d.killServer(signal);
      await d.startServer();
      await d.runnerConnected(2);
      const after = await readStream(d, threadId, { lastEventId: before.at(-1)!.id, done: seen('idle') });

      await d.logged('"msg":"adopted a running turn"');
      const seqs = [...before, ...after].map((f) => f.id);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
      const stored = await allEvents(d, threadId);
      expect(stored.map((e) => e.seq)).toEqual(seqs);
      expect(stored.filter((e) => e.type === 'turn.started')).toHaveLength(1);
      const toolEnd = stored.find((e) => e.type === 'tool_call.end');
      expect(JSON.stringify(toolEnd?.data)).toContain('survived');
      expect(stored.find((e) => e.type === 'turn.ended')?.data).toEqual({ stop_reason: 'end_turn' });
      expect(await threadStatus(d, threadId)).toBe('idle');
      expect((await transcript(d, threadId)).join('\n')).toContain('survived');
    },
    60_000,
  );

  it('interrupts a turn on the detached runner when a Stop comes', async () => {
    const d = await deploy({});
    const { threadId } = await startShellTurn(d, '::sh sleep 30');
    await json(await d.request('POST', `/v2/tasks/${threadId}/interrupt`, { body: {} }), 200);
    expect((await settled(d, threadId, 10_000)).status).toBe('idle');
    const stored = await allEvents(d, threadId);
    expect(stored.find((e) => e.type === 'turn.ended')?.data).toEqual({ stop_reason: 'cancelled' });
  }, 30_000);

  it('keeps every input that got a 201 exactly once when the server is killed while inputs arrive', async () => {
    const d = await deploy({ PADDOCK_LEASE_TTL_MS: '1500' });
    const threadId = await createIdleThread(d);
    const sent: { id: string; text: string; answered: boolean }[] = [];
    const post = async (input: (typeof sent)[number]): Promise<number | undefined> => {
      const response = await d
        .request('POST', `/v2/tasks/${threadId}/inputs`, {
          body: { input_id: input.id, messages: [{ content: input.text }] },
        })
        .catch(() => undefined);
      if (response?.status === 201) input.answered = true;
      return response?.status;
    };
    const posting = (async () => {
      for (let i = 0; i < 40; i++) {
        const input = { id: randomUUID(), text: `::sh sleep 0.05; echo input-${i}`, answered: false };
        sent.push(input);
        await post(input);
        await sleep(25);
      }
    })();
    await waitFor('ten answered inputs', async () => sent.filter((s) => s.answered).length >= 10);
    await d.killServer('SIGKILL');
    await d.startServer();
    await posting;

    // Some inputs went out while the server was down; a client that got no answer retries with the
    // same input_id until it gets one.
    expect(sent.some((s) => !s.answered)).toBe(true);
    for (const input of sent.filter((s) => !s.answered)) {
      await waitFor(`a 201 for ${input.text}`, async () => (await post(input)) === 201, 30_000);
    }
    await waitFor(
      'the thread to settle',
      async () => (await threadStatus(d, threadId)) !== 'running',
      60_000,
    );

    const contents = await transcript(d, threadId);
    for (const input of sent)
      expect(
        contents.filter((c) => c === input.text),
        input.text,
      ).toHaveLength(1);
    const inputs = await json<{ items: { input_id: string; status: string }[] }>(
      await d.request('GET', `/v2/tasks/${threadId}/inputs`),
      200,
    );
    expect(inputs.items).toHaveLength(sent.length);
    expect(inputs.items.every((i) => i.status === 'submitted')).toBe(true);
  }, 120_000);

  it('runs code in the sandbox a detached runner hosts', async () => {
    const d = await deploy({});
    const threadId = await createIdleThread(d);
    const token = await sandboxToken(d, threadId);
    const run = await json<{ exit_code: number; stdout: string }>(
      await d.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
        token,
        body: {
          language: 'python3',
          code: 'print(open("token.txt").read() == __import__("os").environ["PADDOCK_TOKEN"])',
        },
      }),
      200,
    );
    expect(run).toMatchObject({ exit_code: 0, stdout: 'True\n' });
    const capabilities = await json<{ languages: { language: string; available: boolean }[] }>(
      await d.request('GET', `/v2/tasks/${threadId}/code/capabilities`, { token }),
      200,
    );
    expect(capabilities.languages.map((l) => [l.language, l.available])).toEqual([
      ['bash', true],
      ['python3', true],
      ['node', true],
    ]);
  }, 30_000);

  it('refuses inputs (409, no receipt), code runs (409 task_run_busy) and Stop (503) while the lease is expired, then the returning runner is adopted', async () => {
    const d = await deploy({ PADDOCK_LEASE_TTL_MS: '900' });
    // The token file appears whole (a rename): it is read as soon as it exists.
    const { threadId } = await startShellTurn(
      d,
      '::sh echo -n $PADDOCK_TOKEN > token.tmp && mv token.tmp token.txt; sleep 5; echo first',
    );
    const tokenFile = join(d.dataDir, 'workspaces', threadId, 'token.txt');
    await waitFor('the sandbox token', async () => existsSync(tokenFile));
    const token = await readFile(tokenFile, 'utf8');
    d.signalRunner('SIGSTOP');
    await d.killServer('SIGKILL');
    // The dead server renewed the lease last before the kill: it runs out one TTL after it.
    const leaseLapsed = Date.now() + 900 + 50;
    await d.startServer();
    await sleep(Math.max(0, leaseLapsed - Date.now()));

    const input = { input_id: randomUUID(), messages: [{ content: 'second' }] };
    const busy = await d.request('POST', `/v2/tasks/${threadId}/inputs`, { body: input });
    expect(await json(busy, 409)).toEqual({ detail: 'task is busy (active run lease)' });
    expect(busy.headers.get('retry-after')).toBeNull();
    await json(await d.request('GET', `/v2/tasks/${threadId}/inputs/${input.input_id}`), 404);
    const stop = await d.request('POST', `/v2/tasks/${threadId}/interrupt`, {
      body: { expected_generation: 0 },
    });
    expect((await json<{ detail: { code: string } }>(stop, 503)).detail.code).toBe(
      'turn_interrupt_recovery_required',
    );
    expect(stop.headers.get('retry-after')).toBeNull();
    const code = await d.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
      token,
      body: { language: 'bash', code: 'echo hi' },
    });
    expect(await json(code, 409)).toEqual({ detail: { code: 'task_run_busy', message: expect.any(String) } });
    expect(code.headers.get('retry-after')).toBe('5');
    expect(await threadStatus(d, threadId)).toBe('running');

    d.signalRunner('SIGCONT');
    await d.runnerConnected(2);
    await waitFor('the input to be admitted after adoption', async () => {
      const retried = await d.request('POST', `/v2/tasks/${threadId}/inputs`, { body: input });
      return retried.status === 201;
    });
    await settled(d, threadId, 30_000);
    const ran = await d.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
      token,
      body: { language: 'bash', code: 'echo hi' },
    });
    expect(await json(ran, 200)).toMatchObject({ exit_code: 0, stdout: 'hi\n' });
    const contents = await transcript(d, threadId);
    expect(contents.filter((c) => c === 'second')).toHaveLength(1);
    expect(contents.join('\n')).toContain('first');
    const stored = await allEvents(d, threadId);
    expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
    console.log(
      JSON.stringify(
        stored.map((e) => [e.seq, e.type, e.turn_id?.slice(-4), JSON.stringify(e.data).slice(0, 120)]),
      ),
    );
    expect(stored.some((e) => e.type === 'error')).toBe(false);
  }, 60_000);

  it('settles an unadopted turn after the window; its still-running sandbox then refuses a new turn naming it, until a Stop', async () => {
    const d = await deploy({ PADDOCK_LEASE_TTL_MS: '900', PADDOCK_ADOPTION_WINDOW_MS: '1500' });
    const { threadId } = await startShellTurn(d, '::sh sleep 60');
    const orphan = (await allEvents(d, threadId)).find((e) => e.type === 'turn.started')!.turn_id!;
    d.signalRunner('SIGSTOP');
    await d.killServer('SIGKILL');
    await d.startServer();
    await waitFor('the expired turn to be settled', async () => (await threadStatus(d, threadId)) === 'fail');
    const expired = (await allEvents(d, threadId)).find((e) => e.type === 'error')!;
    expect(expired.data).toMatchObject({ code: 'lease_expired' });
    expect(JSON.stringify(expired.data)).toContain('adoption window');

    d.signalRunner('SIGCONT');
    await d.runnerConnected(2);
    const next = await d.request('POST', `/v2/tasks/${threadId}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: 'are you there?' }] },
    });
    expect((await json<{ run_started: boolean }>(next, 201)).run_started).toBe(true);
    await settled(d, threadId, 20_000);
    const refused = (await allEvents(d, threadId)).filter((e) => e.type === 'error').at(-1)!;
    expect(refused.data).toMatchObject({ code: 'sandbox_busy' });
    expect(String((refused.data as { message: string }).message)).toContain(`active_run_id ${orphan}`);
    expect(String((refused.data as { message: string }).message)).toContain('control-plane restart');

    await json(await d.request('POST', `/v2/tasks/${threadId}/interrupt`, { body: {} }), 200);
    await waitFor('the orphan to stop', async () => {
      const again = await d.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: 'hello again' }] },
      });
      await json(again, 201);
      await settled(d, threadId, 20_000);
      return (await threadStatus(d, threadId)) === 'idle';
    });
    expect((await transcript(d, threadId)).join('\n')).toContain('You said: hello again');
  }, 60_000);
});
