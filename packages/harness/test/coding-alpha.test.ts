import { readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { LanguageModelV4 } from '@ai-sdk/provider';
import { createModelRouter } from '@paddock/models';
import { harnesses } from '@paddock/protocol';
import { startGatewayServer, streamingModel } from '@paddock/testing/gateway';
import { testSandboxHands } from '@paddock/testing/supervisor';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { harnessProfiles } from '../src/acp/catalog.ts';
import { createHarness, gatewayModels } from '../src/index.ts';
import { isProcessAlive, ofType, runTurn, tempDir, waitForFile } from './turn-helpers.ts';

const scripted = createModelRouter({});
let listCalls = 0;
// Upstreams the scripted model cannot play: one that never stops calling tools, one that breaks mid-answer.
const fakeUpstreams: Record<string, LanguageModelV4> = {
  'always-list': streamingModel('fake', () => [
    { type: 'tool-call', toolCallId: `list_${++listCalls}`, toolName: 'list', input: '{}' },
    { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usage() },
  ]),
  thinker: streamingModel('fake', () => [
    { type: 'reasoning-start', id: 'r' },
    { type: 'reasoning-delta', id: 'r', delta: 'let me ' },
    { type: 'reasoning-delta', id: 'r', delta: 'think' },
    { type: 'reasoning-end', id: 'r' },
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'answer' },
    { type: 'text-end', id: 't' },
    { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage() },
  ]),
  'broken-midway': streamingModel('fake', () => [
    { type: 'text-start', id: 't' },
    { type: 'text-delta', id: 't', delta: 'partial ' },
    { type: 'error', error: new Error('upstream hung up') },
  ]),
};

let server: Awaited<ReturnType<typeof startGatewayServer>>;
beforeAll(async () => {
  server = await startGatewayServer({ resolve: (id) => fakeUpstreams[id] ?? scripted.resolve(id) });
});
afterAll(() => server.close());

const codingAlpha = createHarness('coding_alpha');

describe('coding_alpha', () => {
  it('runs ::sh, then streams and records the answer quoting it', async () => {
    const workspaceDir = await tempDir();
    const turn = await runTurn(codingAlpha, '::sh echo hi', { gateway: server.gateway, workspaceDir });
    expect(turn.stopReason).toBe('end_turn');

    const start = ofType(turn.events, 'tool_call.start')[0];
    expect(start.data).toMatchObject({ name: 'shell', input: { command: 'echo hi' } });
    const end = ofType(turn.events, 'tool_call.end')[0];
    expect(end.data).toMatchObject({ tool_id: start.data.tool_id, status: 'ok', exit_code: 0 });
    expect(end.data.output).toContain('hi');

    const chunks = ofType(turn.events, 'assistant.message.chunk').map((e) => e.data.content[0].content);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe('shell exited 0:\nhi');
    const message = ofType(turn.events, 'assistant.message');
    expect(message).toHaveLength(1);
    expect(message[0].data).toMatchObject({ content: 'shell exited 0:\nhi', model: 'scripted' });
    expect(message[0].data.message_id).toMatch(/^[0-9a-f-]{36}$/);
    const types = turn.events.map((e) => e.type);
    expect(types.indexOf('tool_call.end')).toBeLessThan(types.indexOf('assistant.message.chunk'));
    expect(types.lastIndexOf('assistant.message.chunk')).toBeLessThan(types.indexOf('assistant.message'));

    // The gateway, not the harness, counts the model calls' usage (D16).
    expect(ofType(turn.events, 'usage')).toHaveLength(0);

    expect(turn.lastAssistantText).toBe('shell exited 0:\nhi');
    expect(turn.messages.map((m) => m.role)).toEqual(['assistant', 'tool', 'assistant']);
    expect(turn.outcome).toBeUndefined();
  });

  it('runs tools with exactly the given environment, in the workspace', async () => {
    const workspaceDir = await tempDir();
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', GREETING: 'bonjour' };
    const turn = await runTurn(codingAlpha, '::sh echo "$GREETING [$VITEST]" && pwd', {
      gateway: server.gateway,
      workspaceDir,
      env,
    });
    const end = ofType(turn.events, 'tool_call.end')[0];
    expect(end.data.output).toBe(`bonjour []\n${workspaceDir}\n`);
  });

  it('writes a file with ::write … ::end', async () => {
    const workspaceDir = await tempDir();
    const turn = await runTurn(codingAlpha, '::write notes/a.txt\nfirst line\n  second\n::end', {
      gateway: server.gateway,
      workspaceDir,
    });
    expect(await readFile(join(workspaceDir, 'notes/a.txt'), 'utf8')).toBe('first line\n  second\n');
    expect(ofType(turn.events, 'tool_call.end')[0].data.status).toBe('ok');
    expect(turn.lastAssistantText).toBe('wrote notes/a.txt');
  });

  it('sets the outcome from ::outcome', async () => {
    const turn = await runTurn(codingAlpha, '::outcome success done', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
    });
    expect(turn.outcome).toEqual({ status: 'success', summary: 'done' });
    expect(turn.stopReason).toBe('end_turn');
    expect(turn.lastAssistantText).toBe('outcome success: done');
  });

  it('is cancelled promptly while the model sleeps', async () => {
    const controller = new AbortController();
    const asked = server.bodies.length;
    const started = Date.now();
    const pending = runTurn(codingAlpha, '::sleep 60000\nhello', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
      signal: controller.signal,
    });
    // Cancelled once the model has the call, so while it sleeps.
    await vi.waitFor(() => expect(server.bodies.length).toBeGreaterThan(asked), { interval: 5 });
    controller.abort();
    const turn = await pending;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(turn.stopReason).toBe('cancelled');
    expect(ofType(turn.events, 'error')).toEqual([]);
    expect(turn.messages).toEqual([]);
  });

  it('kills the whole process group of a running command on cancel', async () => {
    const workspaceDir = await tempDir();
    const controller = new AbortController();
    const pending = runTurn(codingAlpha, '::sh sleep 100 & echo $! > sleep.pid; wait; echo finished', {
      gateway: server.gateway,
      workspaceDir,
      signal: controller.signal,
    });
    const pid = Number(await waitForFile(join(workspaceDir, 'sleep.pid')));
    expect(await isProcessAlive(pid)).toBe(true);
    const started = Date.now();
    controller.abort();
    const turn = await pending;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(turn.stopReason).toBe('cancelled');
    const end = ofType(turn.events, 'tool_call.end')[0];
    expect(end.data).toMatchObject({ status: 'error', error: 'cancelled' });
    await vi.waitFor(async () => expect(await isProcessAlive(pid)).toBe(false), {
      timeout: 2000,
      interval: 20,
    });
    // The conversation stays valid for the next turn: the cancelled call has a result.
    expect(turn.messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect(turn.messages[1]).toMatchObject({
      content: [{ type: 'tool-result', output: { type: 'error-text', value: 'cancelled' } }],
    });
  });

  it('refuses paths that leave the workspace', async () => {
    const workspaceDir = await tempDir();
    const outside = await tempDir('paddock-outside-');
    await symlink(outside, join(workspaceDir, 'escape'));
    await writeFile(join(outside, 'secret.txt'), 'secret\n');
    const attempts = ['../x.txt', '/etc/passwd', 'escape/new.txt', 'escape/secret.txt'];
    const turn = await runTurn(
      codingAlpha,
      attempts.map((path) => `::write ${path}\nowned\n::end`).join('\n'),
      { gateway: server.gateway, workspaceDir },
    );
    const ends = ofType(turn.events, 'tool_call.end');
    expect(ends).toHaveLength(attempts.length);
    for (const end of ends) {
      expect(end.data.status).toBe('error');
      expect(end.data.error).toMatch(/outside the workspace/);
    }
    expect(await readFile(join(outside, 'secret.txt'), 'utf8')).toBe('secret\n');
    await expect(readFile(join(outside, 'new.txt'))).rejects.toThrow();
    await expect(readFile(join(workspaceDir, '..', 'x.txt'))).rejects.toThrow();
    expect(turn.lastAssistantText).toContain('write failed: Error: path is outside the workspace: ../x.txt');
  });

  it('gives the second turn the whole earlier conversation', async () => {
    const workspaceDir = await tempDir();
    const first = await runTurn(codingAlpha, 'first question\n::sh echo one', {
      gateway: server.gateway,
      workspaceDir,
    });
    const history = [...first.input, ...first.messages];
    const before = server.bodies.length;
    const second = await runTurn(codingAlpha, 'second question', {
      gateway: server.gateway,
      workspaceDir,
      history,
    });
    expect(second.lastAssistantText).toBe('You said: second question');

    const sent = server.bodies[before].messages;
    expect(sent[0].role).toBe('system');
    expect(sent[0].content).toContain('coding_alpha');
    expect(sent.slice(1).map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    expect(sent[1].content).toBe('first question\n::sh echo one');
    expect(sent[2].content).toBe('You said: first question');
    expect(JSON.stringify(sent[2].tool_calls)).toContain('echo one');
    expect(sent[3].content).toBe('{"exit_code":0,"output":"one\\n"}');
    expect(sent[4].content).toBe('shell exited 0:\none');
    expect(sent[5].content).toBe('second question');
  });

  it('appends the agent instructions to the system prompt', async () => {
    const before = server.bodies.length;
    await codingAlpha.runTurn({
      turnId: 't',
      model: 'scripted',
      instructions: 'Always answer in French.',
      messages: [{ role: 'user', content: 'hi' }],
      models: gatewayModels(server.gateway.baseURL, server.gateway.apiKey),
      gateway: server.gateway,
      sandbox: await testSandboxHands(),
      workspaceDir: await tempDir(),
      env: {},
      signal: new AbortController().signal,
      emit: () => {},
    });
    expect(server.bodies[before].messages[0].content).toMatch(
      /coding_alpha[\s\S]*\n\nAlways answer in French\.$/,
    );
  });

  it('streams reasoning as reasoning.chunk and keeps it in the conversation', async () => {
    const turn = await runTurn(codingAlpha, 'why?', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
      model: 'thinker',
    });
    expect(ofType(turn.events, 'reasoning.chunk').map((e) => e.data.content[0].content)).toEqual([
      'let me ',
      'think',
    ]);
    expect(ofType(turn.events, 'assistant.message')[0].data.content).toBe('answer');
    expect(turn.messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'let me think' },
          { type: 'text', text: 'answer' },
        ],
      },
    ]);
  });

  it('reports a model error that breaks the stream', async () => {
    const turn = await runTurn(codingAlpha, 'hi', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
      model: 'broken-midway',
    });
    expect(turn.stopReason).toBe('error');
    expect(turn.error).toMatchObject({ code: 'model_error', message: 'upstream hung up' });
    expect(ofType(turn.events, 'error')[0].data).toEqual(turn.error);
    expect(ofType(turn.events, 'assistant.message')[0].data.content).toBe('partial ');
  });

  it('reports a model error from ::error', async () => {
    const turn = await runTurn(codingAlpha, '::error the model is down', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
    });
    expect(turn.stopReason).toBe('error');
    expect(ofType(turn.events, 'error')[0].data).toMatchObject({
      code: 'model_error',
      message: 'the model is down',
    });
  });

  it('stops after 50 steps with max_turns', async () => {
    const turn = await runTurn(codingAlpha, 'loop', {
      gateway: server.gateway,
      workspaceDir: await tempDir(),
      model: 'always-list',
    });
    expect(turn.stopReason).toBe('max_turns');
    expect(ofType(turn.events, 'tool_call.start')).toHaveLength(50);
  });
});

describe('knowledge_cloud and the other harness names', () => {
  it('runs the same loop without a shell', async () => {
    const workspaceDir = await tempDir();
    const knowledge = createHarness('knowledge_cloud');
    expect(knowledge.name).toBe('knowledge_cloud');
    const turn = await runTurn(knowledge, '::sh echo hi\n::write a.md\n# A\n::end', {
      gateway: server.gateway,
      workspaceDir,
    });
    // No shell tool is offered: `::sh` is answered in words, and only the write is called.
    const ends = ofType(turn.events, 'tool_call.end');
    expect(ends.map((end) => end.data.status)).toEqual(['ok']);
    expect(ofType(turn.events, 'assistant.message')[0].data.content).toContain(
      '::sh: no shell tool was offered',
    );
    expect(await readFile(join(workspaceDir, 'a.md'), 'utf8')).toBe('# A\n');
    expect(server.bodies.at(-1)?.messages[0].content).toContain('knowledge_cloud');
  });

  it('fails an ACP value with harness_unavailable when its program has no profile or is not installed', async () => {
    const profiles = harnessProfiles();
    for (const name of harnesses.filter((n) => n !== 'coding_alpha' && n !== 'knowledge_cloud')) {
      const profile = profiles.get(name)!;
      const noProfile = await runTurn(createHarness(name), 'hi', {
        gateway: server.gateway,
        workspaceDir: await tempDir(),
      });
      const notInstalled = await runTurn(createHarness(name), 'hi', {
        gateway: server.gateway,
        workspaceDir: await tempDir(),
        profile,
        env: { PADDOCK_HARNESS_DIR: await tempDir() },
      });
      for (const [turn, message] of [
        [noProfile, `${name} has no program profile on this runner`],
        [notInstalled, `${profile.program} is not installed on this runner`],
      ] as const) {
        expect(turn.stopReason).toBe('error');
        expect(turn.events).toEqual([
          { type: 'error', data: { code: 'harness_unavailable', message, retryable: false } },
        ]);
      }
    }
    expect(() => createHarness('nope')).toThrow(/unknown harness/);
  });
});

function usage() {
  return {
    inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 1, text: 1, reasoning: 0 },
  };
}
