import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runnerLinkPath } from '@paddock/sandbox';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

const hello = (runnerId: string) => ({ type: 'hello', runner_id: runnerId, sandboxes: [], turns: [] });

/** Malformed frames of every type a runner sends, and frames that are no frame at all. */
const malformed: { name: string; frame: unknown; first?: boolean }[] = [
  // The frame of the issue: a hello without its lists threw in an unhandled promise.
  { name: 'hello without sandboxes and turns', frame: { type: 'hello', runner_id: 'r' }, first: true },
  {
    name: 'hello with wrong types',
    frame: { type: 'hello', runner_id: 5, sandboxes: 'x', turns: {} },
    first: true,
  },
  {
    name: 'hello with a turn missing its thread',
    frame: { ...hello('r'), turns: [{ turn_id: 't' }] },
    first: true,
  },
  { name: 'a frame before hello', frame: { type: 'steer.result', req: 1, taken: true }, first: true },
  { name: 'a second hello', frame: hello('again') },
  { name: 'ensure.status without a status', frame: { type: 'ensure.status', req: 1 } },
  {
    name: 'ensure.output with wrong types',
    frame: { type: 'ensure.output', req: '1', stream: 'tty', text: 5 },
  },
  { name: 'ensure.done without booted', frame: { type: 'ensure.done', req: 1 } },
  { name: 'sandbox.gone without a thread', frame: { type: 'sandbox.gone', status: { status: 'stopped' } } },
  {
    name: 'turn.event with a malformed event',
    frame: {
      type: 'turn.event',
      turn_id: 't',
      index: 0,
      event: { type: 'usage', data: { input_tokens: 'many' } },
    },
  },
  {
    name: 'turn.event of an unknown event type',
    frame: { type: 'turn.event', turn_id: 't', index: 0, event: { type: 'evil', data: {} } },
  },
  { name: 'turn.event without an index', frame: { type: 'turn.event', turn_id: 't', event: null } },
  { name: 'turn.result without a result', frame: { type: 'turn.result', turn_id: 't', index: 0 } },
  {
    name: 'turn.result with a malformed message',
    frame: {
      type: 'turn.result',
      turn_id: 't',
      index: 0,
      result: { stopReason: 'end_turn', messages: [{ role: 'root' }], lastAssistantText: '' },
    },
  },
  { name: 'steer.result with wrong types', frame: { type: 'steer.result', req: 1, taken: 'yes' } },
  { name: 'exec.result with wrong types', frame: { type: 'exec.result', req: -1, error: 5 } },
  { name: 'an unknown type', frame: { type: 'pwn', runner_id: 'r' } },
  { name: 'no type', frame: { runner_id: 'r', sandboxes: [], turns: [] } },
  { name: 'null', frame: null },
  { name: 'an array', frame: [hello('r')] },
  { name: 'non-ASCII garbage', frame: { type: 'ü'.repeat(200) } },
  { name: 'not JSON', frame: '{"type":"hello",' },
];

/**
 * Issue 10: a runner (a self-hosted one is a user's machine) that sends malformed frames gets its
 * own link closed, and the server process goes on serving everyone else.
 */
describe.each(testDatabases())('malformed runner link frames ($name)', (database) => {
  const dir = mkdtempSync(join(tmpdir(), 'paddock-frames-'));
  const runnerToken = randomBytes(24).toString('hex');
  let deployment: Deployment;
  let agentKey: string;
  let selfHostedAgent: string;

  beforeAll(async () => {
    const config = join(dir, 'paddock.yaml');
    writeFileSync(config, 'providers:\n  sandbox_e: { enabled: true }\n');
    deployment = await startDeployment(database, {
      PADDOCK_CONFIG: config,
      PADDOCK_RUNNER_TOKEN: runnerToken,
      PADDOCK_SELF_HOSTED_WAIT_MS: '500',
    });
    await deployment.startServer();
    const { agent_id } = await json<{ agent_id: string }>(
      await deployment.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: 'sandbox_e', title: randomUUID() }) },
      }),
      201,
    );
    selfHostedAgent = agent_id;
    agentKey = (
      await json<{ key: string }>(
        await deployment.request('POST', `/v2/cli/agents/${agent_id}/keys`, { body: {} }),
        201,
      )
    ).key;
  }, 60_000);
  afterAll(async () => {
    await deployment?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function connect(token: string): Promise<WebSocket> {
    const socket = new WebSocket(`${deployment.url.replace(/^http/, 'ws')}${runnerLinkPath}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    return new Promise((resolve, reject) => {
      socket.once('open', () => resolve(socket));
      socket.once('error', reject);
    });
  }
  function closed(socket: WebSocket): Promise<{ code: number; reason: string }> {
    return new Promise((resolve) => {
      socket.on('error', () => {});
      socket.once('close', (code, reason) => resolve({ code, reason: String(reason) }));
    });
  }

  for (const kind of ['self-hosted runner', 'deployment runner'] as const) {
    it(`closes only the link of a ${kind} that sends a malformed frame; the server goes on serving`, async () => {
      const token = () => (kind === 'self-hosted runner' ? agentKey : runnerToken);
      // A well-behaved runner, connected throughout: none of this reaches it.
      const bystander = await connect(token());
      let bystanderClosed = false;
      bystander.on('close', () => {
        bystanderClosed = true;
      });
      bystander.send(JSON.stringify(hello(`bystander-${randomUUID()}`)));

      for (const [i, { name, frame, first }] of malformed.entries()) {
        const socket = await connect(token());
        const ended = closed(socket);
        if (!first) socket.send(JSON.stringify(hello(`runner-${i}-${randomUUID()}`)));
        socket.send(typeof frame === 'string' ? frame : JSON.stringify(frame));
        const { code, reason } = await ended;
        expect([name, code]).toEqual([name, 1008]);
        expect(reason.length).toBeGreaterThan(0);
      }
      // Larger than a frame may be: refused by its header, before it is read.
      const socket = await connect(token());
      const ended = closed(socket);
      socket.send(Buffer.alloc(64 * 1024 * 1024 + 1, 0x20));
      // 1009 (too big), or 1006 when the server drops the socket before the client reads its close.
      expect([1006, 1009]).toContain((await ended).code);

      expect(bystanderClosed).toBe(false);
      await json(await deployment.request('GET', '/v2/machines/capabilities'), 200);
      await deployment.logged('"msg":"runner link closed: a frame it sent was refused"');
      await deployment.logged('"reason":"hello: sandboxes: ');
      expect(deployment.output()).not.toMatch(/unhandled|uncaught/i);
      bystander.close();
    }, 60_000);
  }

  it('ends the turn a malformed frame was for, instead of leaving it to wait on a replay', async () => {
    const runner = await connect(agentKey);
    const ended = closed(runner);
    const frames: Record<string, unknown>[] = [];
    runner.on('message', (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    const next = async (type: string) => {
      const until = Date.now() + 20_000;
      for (;;) {
        const frame = frames.find((f) => f.type === type);
        if (frame) return frame;
        if (Date.now() > until) throw new Error(`no ${type} frame: ${JSON.stringify(frames)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    runner.send(JSON.stringify(hello(`turns-${randomUUID()}`)));
    const { thread_id } = await json<{ thread_id: string }>(
      await deployment.request('POST', '/v2/threads', {
        body: { agent_id: selfHostedAgent, input: 'hello' },
      }),
      201,
    );
    const ensure = await next('ensure');
    runner.send(JSON.stringify({ type: 'ensure.done', req: ensure.req, booted: true }));
    const turn = (await next('turn')) as { command: { turn_id: string } };
    const result = {
      stopReason: 'end_turn',
      messages: [{ role: 'assistant', content: 5 }],
      lastAssistantText: '',
    };
    runner.send(JSON.stringify({ type: 'turn.result', turn_id: turn.command.turn_id, index: 0, result }));
    expect((await ended).code).toBe(1008);
    expect(await settled(deployment, thread_id)).toMatchObject({ status: 'fail' });
    const errors = (await allEvents(deployment, thread_id)).filter((e) => e.type === 'error');
    expect(errors.map((e) => e.data)).toContainEqual(
      expect.objectContaining({ code: 'runner_protocol_error', retryable: false }),
    );
  }, 60_000);
});

describe('the server process guard', () => {
  it('logs an unhandled rejection and an uncaught exception, and the process keeps running', () => {
    const guard = resolve(import.meta.dirname, '../src/startup/process-guard.ts');
    const script = `
      import pino from 'pino';
      import { keepServingOnErrors } from ${JSON.stringify(guard)};
      keepServingOnErrors(pino());
      Promise.reject(new Error('rejected-by-test'));
      setTimeout(() => { throw new Error('thrown-by-test'); }, 10);
      setTimeout(() => console.log('still-alive'), 100);
    `;
    const output = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: resolve(import.meta.dirname, '..'),
      encoding: 'utf8',
    });
    expect(output).toContain('rejected-by-test');
    expect(output).toContain('unhandled promise rejection; still serving');
    expect(output).toContain('thrown-by-test');
    expect(output).toContain('uncaught exception; still serving');
    expect(output.trim().split('\n').at(-1)).toBe('still-alive');
  });
});
