import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { startGatewayServer, streamingModel } from '@paddock/testing/gateway';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createModelRouter } from '../src/model-router.ts';

const router = createModelRouter({});
const seenCalls: LanguageModelV4CallOptions[] = [];
// Records what the gateway passed to the model; the model itself is the real scripted one.
const recordingRouter = {
  resolve(modelId: string): LanguageModelV4 | undefined {
    if (modelId === 'broken-midway') return brokenMidwayModel;
    const model = router.resolve(modelId);
    if (!model) return undefined;
    return {
      ...model,
      doGenerate(options) {
        seenCalls.push(options);
        return model.doGenerate(options);
      },
      doStream(options) {
        seenCalls.push(options);
        return model.doStream(options);
      },
    };
  },
};

// An upstream that fails after it started answering, to see the mid-stream error frame.
const brokenMidwayModel = streamingModel('broken-midway', () => [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'partial ' },
  { type: 'error', error: new Error('upstream hung up') },
]);

let gateway: Awaited<ReturnType<typeof startGatewayServer>>;
let paddock: ReturnType<typeof createOpenAICompatible>;

beforeAll(async () => {
  gateway = await startGatewayServer(recordingRouter);
  paddock = createOpenAICompatible({
    name: 'paddock',
    baseURL: gateway.baseURL,
    apiKey: 'test',
    includeUsage: true,
  });
});
afterAll(() => gateway.close());

const shellCalls: string[] = [];
const tools = {
  shell: tool({
    description: 'Run a command',
    inputSchema: z.object({ command: z.string() }),
    execute: async ({ command }) => {
      shellCalls.push(command);
      return { exit_code: 0, output: 'hi\n' };
    },
  }),
  write: tool({
    inputSchema: z.object({ path: z.string(), content: z.string() }),
    execute: async ({ path }) => `wrote ${path}`,
  }),
  report_outcome: tool({
    inputSchema: z.object({ status: z.enum(['success', 'fail', 'need_more_info']), summary: z.string() }),
    execute: async () => 'recorded',
  }),
};

function post(body: unknown) {
  return fetch(`${gateway.baseURL}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

describe('gateway over HTTP with the AI SDK OpenAI-compatible client', () => {
  it('streams text a chunk at a time', async () => {
    const result = streamText({ model: paddock.chatModel('scripted'), prompt: 'hello from the other side' });
    const chunks: string[] = [];
    for await (const text of result.textStream) chunks.push(text);
    expect(chunks).toEqual(['You ', 'said: ', 'hello ', 'from ', 'the ', 'other ', 'side']);
    const usage = await result.usage;
    expect(usage.inputTokens).toBeGreaterThan(0);
    expect(usage.outputTokens).toBeGreaterThan(0);
  });

  it('round-trips tool calls and answers the results in a second step', async () => {
    const result = streamText({
      model: paddock.chatModel('scripted'),
      prompt: 'run it\n::sh echo hi\n::outcome success shipped',
      tools,
      stopWhen: stepCountIs(5),
    });
    const steps = await result.steps;
    expect(steps).toHaveLength(2);
    expect(steps[0].text).toBe('You said: run it');
    expect(steps[0].finishReason).toBe('tool-calls');
    expect(steps[0].toolCalls.map((c) => [c.toolName, c.input])).toEqual([
      ['shell', { command: 'echo hi' }],
      ['report_outcome', { status: 'success', summary: 'shipped' }],
    ]);
    expect(shellCalls).toContain('echo hi');
    expect(steps[1].text).toBe('shell exited 0:\nhi\noutcome success: shipped');
    expect(steps[1].finishReason).toBe('stop');

    const second = seenCalls.at(-1)!;
    expect(second.tools?.map((t) => t.name)).toEqual(['shell', 'write', 'report_outcome']);
    const toolMessage = second.prompt.at(-1);
    expect(toolMessage?.role).toBe('tool');
    expect(toolMessage?.content).toHaveLength(2);
    expect(toolMessage?.content[0]).toMatchObject({ type: 'tool-result', toolName: 'shell' });
  });

  it('serves non-streaming requests', async () => {
    const result = await generateText({
      model: paddock.chatModel('scripted'),
      prompt: '::write a.txt\nx\n::end',
      tools,
    });
    expect(result.toolCalls[0]).toMatchObject({
      toolName: 'write',
      input: { path: 'a.txt', content: 'x\n' },
    });
    expect(result.usage.inputTokens).toBeGreaterThan(0);
  });

  it('surfaces ::error as a model error', async () => {
    const result = streamText({
      model: paddock.chatModel('scripted'),
      prompt: '::error kaboom',
      maxRetries: 0,
      onError: () => {},
    });
    const errors: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === 'error') errors.push(part.error);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toBe('kaboom');
  });
});

describe('gateway wire format', () => {
  it('sends the role first, then content, finish reason, usage, and [DONE]', async () => {
    const res = await post({
      model: 'scripted',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi there' }] }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((f) => JSON.parse(f.slice('data: '.length)));
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'scripted')).toBe(true);
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('You said: hi there');
    expect(chunks.at(-2).choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1).choices).toEqual([]);
    expect(chunks.at(-1).usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 5 });
  });

  it('streams tool calls as tool_calls deltas', async () => {
    const res = await post({
      model: 'scripted',
      messages: [{ role: 'user', content: '::sh ls -la' }],
      // Claude Code's shell tool: the call is shaped to its schema, required description included.
      tools: [
        {
          type: 'function',
          function: {
            name: 'Bash',
            parameters: {
              type: 'object',
              properties: { command: { type: 'string' }, description: { type: 'string' } },
              required: ['command', 'description'],
            },
          },
        },
      ],
      stream: true,
    });
    const chunks = (await res.text())
      .split('\n\n')
      .filter((f) => f.startsWith('data: {'))
      .map((f) => JSON.parse(f.slice(6)));
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    expect(deltas[0]).toMatchObject({ index: 0, type: 'function', function: { name: 'Bash' } });
    expect(deltas.map((d: { function: { arguments: string } }) => d.function.arguments).join('')).toBe(
      '{"command":"ls -la","description":"run by the scripted model"}',
    );
    expect(chunks.at(-1).choices[0].finish_reason).toBe('tool_calls');
  });

  it('returns a chat.completion for stream: false', async () => {
    const res = await post({
      model: 'scripted',
      messages: [{ role: 'user', content: '::outcome fail nope' }],
    });
    const body = await res.json();
    expect(body.object).toBe('chat.completion');
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.tool_calls[0].function).toEqual({
      name: 'report_outcome',
      arguments: '{"status":"fail","summary":"nope"}',
    });
    expect(body.choices[0].finish_reason).toBe('tool_calls');
  });

  it('maps conversation history into the model prompt', async () => {
    const res = await post({
      model: 'scripted',
      messages: [
        { role: 'developer', content: 'be brief' },
        { role: 'user', content: '::sh echo hi' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'c1', type: 'function', function: { name: 'shell', arguments: '{"command":"echo hi"}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'c1', content: '{"exit_code":3,"output":"nope\\n"}' },
      ],
      max_completion_tokens: 50,
      stop: 'END',
    });
    const body = await res.json();
    expect(body.choices[0].message.content).toBe('shell exited 3:\nnope');
    const call = seenCalls.at(-1)!;
    expect(call.prompt[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(call.maxOutputTokens).toBe(50);
    expect(call.stopSequences).toEqual(['END']);
  });

  it('passes a reasoning effort the model layer knows on, and ignores one it does not', async () => {
    for (const [effort, reasoning] of [
      ['high', 'high'],
      ['whatever', undefined],
    ] as const) {
      const res = await post({
        model: 'scripted',
        messages: [{ role: 'user', content: 'hi' }],
        reasoning_effort: effort,
      });
      expect(res.status).toBe(200);
      expect(seenCalls.at(-1)!.reasoning, effort).toBe(reasoning);
    }
  });

  it('rejects a bad body with 400 and an unknown model with 404', async () => {
    const bad = await post({ model: 'scripted', messages: 'nope' });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.any(String),
    });

    const unknown = await post({ model: 'openai/gpt-x', messages: [{ role: 'user', content: 'hi' }] });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe('model_not_found');
  });

  it('answers a non-retryable model error before streaming with 422, and one mid-stream with an error frame', async () => {
    for (const stream of [false, true]) {
      const res = await post({
        model: 'scripted',
        messages: [{ role: 'user', content: '::error nope' }],
        stream,
      });
      expect(res.status).toBe(422);
      expect((await res.json()).error).toMatchObject({ message: 'nope', code: 'model_error' });
    }
    const res = await post({
      model: 'broken-midway',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    expect(res.status).toBe(200);
    const frames = (await res.text()).split('\n\n').filter(Boolean);
    expect(frames.at(-1)).toBe(
      'data: {"error":{"message":"upstream hung up","type":"api_error","code":"model_error"}}',
    );
    expect(frames.some((f) => f.includes('partial '))).toBe(true);
  });

  it('aborts the model call when the client goes away', async () => {
    const controller = new AbortController();
    const callsBefore = seenCalls.length;
    const request = fetch(`${gateway.baseURL}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'scripted',
        messages: [{ role: 'user', content: '::sleep 60000' }],
        stream: true,
      }),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(seenCalls.length).toBeGreaterThan(callsBefore), { interval: 10 });
    const call = seenCalls.at(-1)!;
    expect(call.abortSignal?.aborted).toBe(false);
    controller.abort();
    await request;
    await vi.waitFor(() => expect(call.abortSignal?.aborted).toBe(true), { interval: 10 });
  });
});
