import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import {
  APICallError,
  generateText,
  type ModelMessage,
  stepCountIs,
  streamText,
  type ToolSet,
  tool,
} from 'ai';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createEvalJudge } from '../src/judge/eval-judge.ts';
import { createScriptedModel } from '../src/scripted-model.ts';

const model = createScriptedModel();

const tools = {
  shell: tool({
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => ({ exit_code: 0, output: `ran ${command}\n` }),
  }),
  write: tool({
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path }) => `wrote ${path}`,
  }),
  report_outcome: tool({
    inputSchema: z.object({ status: z.string(), summary: z.string() }),
    execute: async () => 'recorded',
  }),
};

async function run(prompt: string, abortSignal?: AbortSignal, calledModel = model, offered: ToolSet = tools) {
  const result = streamText({
    model: calledModel,
    prompt,
    tools: offered,
    stopWhen: stepCountIs(5),
    abortSignal,
    onError: () => {},
  });
  const parts = [];
  for await (const part of result.fullStream) parts.push(part);
  return parts;
}

function textOf(parts: Awaited<ReturnType<typeof run>>): string {
  return parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
}

describe('scripted model through streamText', () => {
  it('answers plain text a word a chunk, with usage', async () => {
    const parts = await run('hello there\nworld');
    const deltas = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : []));
    expect(deltas).toEqual(['You ', 'said: ', 'hello ', 'there ', 'world']);
    const finish = parts.find((p) => p.type === 'finish');
    expect(finish?.type === 'finish' && finish.finishReason).toBe('stop');
    const usage = finish?.type === 'finish' ? finish.totalUsage : undefined;
    expect(usage?.inputTokens).toBeGreaterThan(0);
    expect(Number.isInteger(usage?.inputTokens)).toBe(true);
    expect(usage?.outputTokens).toBe(Math.ceil('You said: hello there world'.length / 4));
  });

  it('calls the shell tool and then quotes its result', async () => {
    const parts = await run('::sh echo hi');
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call).toMatchObject({ toolName: 'shell', input: { command: 'echo hi' } });
    expect(call?.type === 'tool-call' && call.toolCallId).toMatch(/^call_\d+_/);
    const steps = parts
      .filter((p) => p.type === 'finish-step')
      .map((p) => p.type === 'finish-step' && p.finishReason);
    expect(steps).toEqual(['tool-calls', 'stop']);
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
    expect(text).toBe('shell exited 0:\nran echo hi');
  });

  it('writes the lines between ::write and ::end', async () => {
    const parts = await run('::write src/a.txt\n  indented\nsecond\n::end');
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call).toMatchObject({
      toolName: 'write',
      input: { path: 'src/a.txt', content: '  indented\nsecond\n' },
    });
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
    expect(text).toBe('wrote src/a.txt');
  });

  it('reports an outcome', async () => {
    const parts = await run('::outcome need_more_info which branch?');
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call).toMatchObject({
      toolName: 'report_outcome',
      input: { status: 'need_more_info', summary: 'which branch?' },
    });
    const text = parts.flatMap((p) => (p.type === 'text-delta' ? [p.text] : [])).join('');
    expect(text).toBe('outcome need_more_info: which branch?');
  });

  it('emits text and several tool calls in one response, with unique ids', async () => {
    const result = await generateText({
      model,
      prompt: 'do two things\n::sh ls\n::sh pwd',
      tools,
    });
    expect(result.text).toBe('You said: do two things');
    expect(result.finishReason).toBe('tool-calls');
    expect(result.toolCalls.map((c) => c.input)).toEqual([{ command: 'ls' }, { command: 'pwd' }]);
    expect(new Set(result.toolCalls.map((c) => c.toolCallId)).size).toBe(2);
  });

  it('calls an offered tool by its exact name with ::call, and quotes its result', async () => {
    const lookup = tool({
      inputSchema: z.object({ query: z.string(), limit: z.number() }),
      execute: async ({ query, limit }) => `found ${limit} for ${query}`,
    });
    const parts = await run('::call mcp__docs__lookup {"query": "tus", "limit": 2}', undefined, model, {
      ...tools,
      mcp__docs__lookup: lookup,
    });
    const call = parts.find((p) => p.type === 'tool-call');
    expect(call).toMatchObject({ toolName: 'mcp__docs__lookup', input: { query: 'tus', limit: 2 } });
    expect(textOf(parts)).toBe('mcp__docs__lookup: found 2 for tus');
  });

  it('calls the one offered tool whose name ends as `*<end>` says, and nothing when none or two do', async () => {
    const lookup = tool({
      inputSchema: z.object({ query: z.string() }),
      execute: async ({ query }) => query,
    });
    const offered = { ...tools, mcp__docs__lookup: lookup, docs__lookup_all: lookup };
    const parts = await run('::call *__lookup {"query": "tus"}', undefined, model, offered);
    expect(parts.find((p) => p.type === 'tool-call')).toMatchObject({ toolName: 'mcp__docs__lookup' });
    const ambiguous = await generateText({ model, prompt: '::call *lookup* {}', tools: offered });
    expect(ambiguous.toolCalls).toEqual([]);
    expect(ambiguous.text).toMatch(/^::call \*lookup\*: no such tool was offered/);
    const twoEndings = { ...offered, other__lookup: lookup };
    const two = await generateText({ model, prompt: '::call *__lookup {}', tools: twoEndings });
    expect(two.toolCalls).toEqual([]);
  });

  it('answers in words, calling nothing, when ::call names a tool not offered or bad JSON', async () => {
    const missing = await generateText({ model, prompt: '::call lookup {"query": "tus"}', tools });
    expect(missing.toolCalls).toEqual([]);
    expect(missing.text).toBe(
      '::call lookup: no such tool was offered (offered: shell, write, report_outcome)',
    );
    const badJson = await generateText({ model, prompt: '::call shell {"command": ', tools });
    expect(badJson.toolCalls).toEqual([]);
    expect(badJson.text).toMatch(/^::call shell: the arguments are not JSON \(.+\)$/);
    const notObject = await generateText({ model, prompt: '::call shell ["ls"]', tools });
    expect(notObject.text).toBe('::call shell: the arguments must be a JSON object');
  });

  it("reads with ::seen the offered tools' descriptions too (where some programs list their skills)", async () => {
    const skill = tool({
      description: 'Execute a skill. <available_skills>greeter: Greets people</available_skills>',
      inputSchema: z.object({ skill: z.string() }),
    });
    const result = await generateText({
      model,
      prompt: '::seen Greets people\n::seen Waves at people',
      tools: { ...tools, skill },
    });
    expect(result.text).toBe('seen: yes\nseen: no');
  });

  it('tells with ::seen whether text was in what it was sent before the message', async () => {
    const messages: ModelMessage[] = [
      { role: 'user', content: 'remember the word marigold' },
      {
        role: 'assistant',
        content: [
          { type: 'tool-call', toolCallId: 't1', toolName: 'shell', input: { command: 'cat notes' } },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 't1',
            toolName: 'shell',
            output: { type: 'text', value: 'the code is zinnia-42' },
          },
        ],
      },
      { role: 'assistant', content: 'noted' },
      {
        role: 'user',
        content: '::seen marigold\n::seen zinnia-42\n::seen terse\n::seen tulip\n::seen tulip',
      },
    ];
    const result = await generateText({ model, instructions: 'You are terse.', messages, tools });
    // The message itself is not searched: `tulip` appears only there.
    expect(result.text).toBe('seen: yes\nseen: yes\nseen: yes\nseen: no\nseen: no');
    expect(result.toolCalls).toEqual([]);
  });

  it("reads the script from the message's last text part; the parts before it are earlier text", async () => {
    // Gemini CLI and Claude Code put context parts of their own before the user's text.
    const { text } = await generateText({
      model,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<session_context>cwd: /workspace</session_context>' },
            { type: 'text', text: 'hello there\n::seen cwd: /workspace' },
          ],
        },
      ],
    });
    expect(text).toBe('You said: hello there\nseen: yes');
  });

  it('fails the call with the ::error message', async () => {
    const parts = await run('::error upstream exploded');
    const error = parts.find((p) => p.type === 'error');
    expect(APICallError.isInstance(error?.type === 'error' && error.error)).toBe(true);
    expect((error as { error: Error }).error.message).toBe('upstream exploded');
  });

  it('waits on ::sleep, and an abort cuts the wait short', async () => {
    const started = Date.now();
    await run('::sleep 40\nhi');
    expect(Date.now() - started).toBeGreaterThanOrEqual(35);

    const controller = new AbortController();
    // A call starts its sleep before it first awaits: once it has been made, the abort lands mid-sleep.
    let called = false;
    const watched = {
      ...model,
      doStream(options: LanguageModelV4CallOptions) {
        const call = model.doStream(options);
        called = true;
        return call;
      },
    };
    const abortStarted = Date.now();
    const running = run('::sleep 60000\nhi', controller.signal, watched);
    await vi.waitFor(() => expect(called).toBe(true), { interval: 5 });
    controller.abort();
    const parts = await running;
    expect(Date.now() - abortStarted).toBeLessThan(2000);
    expect(parts.some((p) => p.type === 'abort')).toBe(true);
    expect(parts.some((p) => p.type === 'text-delta')).toBe(false);
  });

  it('rejects a direct call with an AbortError when aborted mid-sleep', async () => {
    const controller = new AbortController();
    const call = model.doStream({
      prompt: [{ role: 'user', content: [{ type: 'text', text: '::sleep 60000' }] }],
      abortSignal: controller.signal,
    });
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('scripted model as an eval judge (D8: ::verdict, ::expect)', () => {
  const judge = createEvalJudge({
    resolve: (id) => (id === 'scripted' ? model : undefined),
    defaultModel: 'scripted',
  });
  const transcript = [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: 'You said: hello' },
  ];
  const ask = (criteria: string) =>
    judge.judge({ model: 'scripted', criteria, transcript, signal: AbortSignal.timeout(5000) });

  it('answers a fixed verdict with ::verdict', async () => {
    expect(await ask('::verdict pass all good')).toEqual({ passed: true, reason: 'all good' });
    expect(await ask('Be polite.\n::verdict fail rude')).toEqual({ passed: false, reason: 'rude' });
  });

  it('looks for text in what it was given before the criteria with ::expect', async () => {
    expect(await ask('::expect You said: hello')).toEqual({
      passed: true,
      reason: 'found "You said: hello" in the conversation',
    });
    expect((await ask('::expect goodbye')).passed).toBe(false);
    // Only earlier messages count: the criteria message itself is not searched.
    expect((await ask('::expect criteria-only-text criteria-only-text')).passed).toBe(false);
  });

  it('rejects when the model errs, gives no verdict, or is not served', async () => {
    await expect(ask('::error judge down')).rejects.toThrow('judge down');
    await expect(ask('no directive here')).rejects.toThrow(/report_verdict/);
    await expect(
      judge.judge({ model: 'openai/x', criteria: '', transcript, signal: AbortSignal.timeout(5000) }),
    ).rejects.toThrow('the model gateway serves no model "openai/x"');
  });
});
