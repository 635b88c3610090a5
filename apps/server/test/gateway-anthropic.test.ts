import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { handleAnthropicMessages } from '@paddock/models';
import { testDatabases } from '@paddock/testing';
import { streamingModel } from '@paddock/testing/gateway';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

// The AI SDK's model types, as the stand-in models of @paddock/testing have them.
type LanguageModelV4 = ReturnType<typeof streamingModel>;
type LanguageModelV4CallOptions = Parameters<LanguageModelV4['doStream']>[0];

const lookup = {
  name: 'lookup',
  description: 'Looks a word up',
  input_schema: { type: 'object' as const, properties: { q: { type: 'string' } }, required: ['q'] },
};

describe.each(testDatabases())('the Anthropic gateway on $name', (database) => {
  let server: TestServer;
  let pat: string;
  let baseURL: string;
  /** The official client with the token as its `apiKey` (sent as `x-api-key`). */
  let client: Anthropic;
  beforeAll(async () => {
    server = await startTestServer(database);
    pat = await adminTokenWith(server, ['publish']);
    baseURL = `${server.url}/v2/gateway/anthropic`;
    client = new Anthropic({ baseURL, apiKey: pat, maxRetries: 0 });
  });
  afterAll(() => server.close());

  it('answers a message, with the token as x-api-key or as a bearer token', async () => {
    const message = await client.messages.create({
      model: 'scripted',
      max_tokens: 256,
      system: 'You are terse.',
      messages: [{ role: 'user', content: 'hello there' }],
    });
    expect(message).toMatchObject({
      type: 'message',
      role: 'assistant',
      model: 'scripted',
      content: [{ type: 'text', text: 'You said: hello there' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
    });
    expect(message.id).toMatch(/^msg_/);
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);

    const bearer = new Anthropic({ baseURL, authToken: pat, apiKey: null, maxRetries: 0 });
    const answer = await bearer.messages.create({
      model: 'scripted',
      max_tokens: 256,
      system: [{ type: 'text', text: 'You are terse.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'bearer works' }] }],
    });
    expect(answer.content).toEqual([{ type: 'text', text: 'You said: bearer works' }]);
  });

  it("streams a message as Anthropic's events, usage at the end", async () => {
    const stream = client.messages.stream({
      model: 'scripted',
      max_tokens: 256,
      messages: [{ role: 'user', content: 'stream these few words' }],
    });
    const deltas: string[] = [];
    const events: string[] = [];
    stream.on('text', (delta) => deltas.push(delta));
    stream.on('streamEvent', (event) => events.push(event.type));
    const message = await stream.finalMessage();
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('You said: stream these few words');
    expect(message.content).toEqual([{ type: 'text', text: 'You said: stream these few words' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect([...new Set(events)]).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
  });

  it('sends the cache counts too (0 without a cache), in a message and in each streamed usage', async () => {
    // claude-agent-acp 0.23.1 adds input, output, cache read and cache creation tokens for ACP's
    // usage_update; one missing made it NaN (null on the wire) and the ACP client refused it.
    const counts = { input_tokens: expect.any(Number), output_tokens: expect.any(Number) };
    const cache = { cache_read_input_tokens: 0, cache_creation_input_tokens: 0 };
    const message = await client.messages.create({
      model: 'scripted',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'count me' }],
    });
    expect(message.usage).toMatchObject({ ...counts, ...cache });
    const stream = client.messages.stream({
      model: 'scripted',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'count me' }],
    });
    const usages: unknown[] = [];
    stream.on('streamEvent', (event) => {
      if (event.type === 'message_start') usages.push(event.message.usage);
      if (event.type === 'message_delta') usages.push(event.usage);
    });
    await stream.finalMessage();
    expect(usages).toEqual([
      expect.objectContaining({ ...counts, ...cache }),
      expect.objectContaining(cache),
    ]);
  });

  it('calls a tool and answers its result, string or blocks, error or not, streaming or not', async () => {
    const ask = { role: 'user' as const, content: '::call lookup {"q":"paddock"}' };
    const call = await client.messages.create({
      model: 'scripted',
      max_tokens: 256,
      tools: [lookup],
      messages: [ask],
    });
    expect(call.stop_reason).toBe('tool_use');
    expect(call.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'lookup', input: { q: 'paddock' } },
    ]);
    const toolUse = call.content[0] as Anthropic.ToolUseBlock;

    const answerTo = async (result: Anthropic.ToolResultBlockParam) => {
      const answer = await client.messages.create({
        model: 'scripted',
        max_tokens: 256,
        tools: [lookup],
        messages: [ask, { role: 'assistant', content: call.content }, { role: 'user', content: [result] }],
      });
      expect(answer.stop_reason).toBe('end_turn');
      return answer.content;
    };
    const result = { type: 'tool_result' as const, tool_use_id: toolUse.id };
    expect(await answerTo({ ...result, content: 'a place for horses' })).toEqual([
      { type: 'text', text: 'lookup: a place for horses' },
    ]);
    expect(await answerTo({ ...result, content: [{ type: 'text', text: 'blocks too' }] })).toEqual([
      { type: 'text', text: 'lookup: blocks too' },
    ]);
    expect(await answerTo({ ...result, content: 'no such word', is_error: true })).toEqual([
      { type: 'text', text: 'lookup failed: no such word' },
    ]);

    // Streamed, the call's input arrives as input_json_delta and the client puts it back together.
    const streamed = await client.messages
      .stream({
        model: 'scripted',
        max_tokens: 256,
        tools: [lookup],
        tool_choice: { type: 'any' },
        messages: [ask],
      })
      .finalMessage();
    expect(streamed.stop_reason).toBe('tool_use');
    expect(streamed.content).toEqual([
      { type: 'tool_use', id: expect.any(String), name: 'lookup', input: { q: 'paddock' } },
    ]);
  });

  it("passes a failed model call on with its status and Anthropic's error body, streaming or not", async () => {
    for (const stream of [false, true]) {
      const failed = await client.messages
        .create({
          model: 'scripted',
          max_tokens: 256,
          stream,
          messages: [{ role: 'user', content: '::error boom' }],
        })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(failed).toBeInstanceOf(APIError);
      expect((failed as APIError).status).toBe(422);
      expect((failed as APIError).type).toBe('invalid_request_error');
      expect((failed as APIError).error).toEqual({
        type: 'error',
        error: { type: 'invalid_request_error', message: 'boom' },
      });
    }

    const unknown = await client.messages
      .create({ model: 'no-such-model', max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(unknown).toBeInstanceOf(Anthropic.NotFoundError);
    expect((unknown as APIError).type).toBe('not_found_error');

    const invalid = await client.messages.create({ model: 'scripted', max_tokens: 256, messages: [] }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(invalid).toBeInstanceOf(Anthropic.BadRequestError);
    expect((invalid as APIError).type).toBe('invalid_request_error');
  });

  it("refuses a bad credential with 401 in Anthropic's shape, Paddock's detail kept", async () => {
    for (const bad of [
      new Anthropic({ baseURL, apiKey: 'pdk_pat_wrong', maxRetries: 0 }),
      new Anthropic({ baseURL, authToken: 'pdk_pat_wrong', apiKey: null, maxRetries: 0 }),
    ]) {
      const refused = await bad.messages
        .create({ model: 'scripted', max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(Anthropic.AuthenticationError);
      expect((refused as APIError).status).toBe(401);
      expect((refused as APIError).type).toBe('authentication_error');
      expect((refused as APIError).error).toMatchObject({ type: 'error', detail: expect.anything() });
    }
    const missing = await fetch(`${baseURL}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(missing.status).toBe(401);
    expect(await missing.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: 'missing bearer token' },
      detail: 'missing bearer token',
    });
  });

  it('refuses an agent key with 403 permission_error', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const { key } = await json<{ key: string }>(
      await server.request('POST', `/v2/cli/agents/${agent_id}/keys`, { body: {} }),
      201,
    );
    const refused = await new Anthropic({ baseURL, apiKey: key, maxRetries: 0 }).messages
      .create({ model: 'scripted', max_tokens: 256, messages: [{ role: 'user', content: 'hi' }] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError);
    expect((refused as APIError).type).toBe('permission_error');
  });

  it("lists the models in Anthropic's shape", async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models).toContainEqual({
      type: 'model',
      id: 'scripted',
      display_name: 'scripted',
      created_at: expect.any(String),
    });
    const page = (await (
      await fetch(`${baseURL}/v1/models`, { headers: { 'x-api-key': pat } })
    ).json()) as Record<string, unknown>;
    expect(page).toMatchObject({ has_more: false, first_id: 'scripted', last_id: expect.any(String) });
  });

  it('counts tokens with an estimate', async () => {
    const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'count me' }];
    const small = await client.messages.countTokens({ model: 'scripted', messages });
    const body = JSON.stringify({ messages, tools: [lookup] });
    const larger = await client.beta.messages.countTokens({ model: 'scripted', messages, tools: [lookup] });
    expect(small.input_tokens).toBeGreaterThanOrEqual(1);
    expect(larger.input_tokens).toBe(Math.ceil(body.length / 4));
  });

  it("takes Claude Code's requests: ?beta=true, system entries among the messages, fields it does not serve", async () => {
    const beta = await client.beta.messages.create({
      model: 'scripted',
      max_tokens: 256,
      betas: ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27'],
      messages: [{ role: 'user', content: 'beta works' }],
    });
    expect(beta.content).toEqual([{ type: 'text', text: 'You said: beta works' }]);

    const raw = await fetch(`${baseURL}/v1/messages?beta=true`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${pat}`,
        'anthropic-version': '2023-06-01',
        'anthropic-beta': 'claude-code-20250219,mid-conversation-system-2026-04-07',
      },
      body: JSON.stringify({
        model: 'scripted',
        max_tokens: 32000,
        system: [{ type: 'text', text: 'You are Claude Code.', cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'first' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'document', source: { type: 'file', file_id: 'file_011' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hmm', signature: 'sig' },
              { type: 'server_tool_use', id: 'srvtoolu_1', name: 'web_search', input: { query: 'x' } },
              { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] },
              { type: 'text', text: 'ok' },
            ],
          },
          { role: 'system', content: 'The code word is pineapple.' },
          { role: 'user', content: [{ type: 'text', text: '::seen pineapple\n::options' }] },
        ],
        tools: [lookup, { type: 'web_search_20250305', name: 'web_search', max_uses: 3 }],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        thinking: { type: 'enabled', budget_tokens: 1024 },
        metadata: { user_id: 'user_abc' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        output_config: { effort: 'high' },
        stop_sequences: ['\n\nHuman:'],
        temperature: 0.5,
        top_p: 0.9,
        stream: false,
      }),
    });
    expect(raw.status).toBe(200);
    const message = (await raw.json()) as Anthropic.Message;
    expect(message.content).toEqual([
      {
        type: 'text',
        text: 'seen: yes\noptions: {"temperature":0.5,"top_p":0.9,"max_output_tokens":32000,"reasoning_effort":"high"}',
      },
    ]);
  });

  it('answers the base URL (a HEAD, with or without its slash) with the gateway credential', async () => {
    for (const url of [baseURL, `${baseURL}/`]) {
      const probe = await fetch(url, { method: 'HEAD', headers: { 'x-api-key': pat } });
      expect([probe.status, await probe.text()], url).toEqual([200, '']);
      const anonymous = await fetch(url, { method: 'HEAD' });
      expect(anonymous.status, url).toBe(401);
    }
    const unknown = await fetch(`${baseURL}/v1/nothing-here`, { headers: { 'x-api-key': pat } });
    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      { type: 'error', error: { type: 'not_found_error', message: 'Not Found' }, detail: 'Not Found' },
    ]);
  });
});

describe('the Anthropic dialect with stand-in upstream models', () => {
  it("ends a stream whose model fails after it started with Anthropic's error event, which the client raises", async () => {
    const broken = streamingModel('broken-midway', () => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'partial ' },
      { type: 'error', error: new Error('upstream hung up') },
    ]);
    const answer = await handleAnthropicMessages(
      { resolve: () => broken },
      { model: 'broken-midway', max_tokens: 16, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      new AbortController().signal,
    );
    if (!('stream' in answer)) throw new Error('expected a stream');
    const frames: string[] = [];
    for await (const frame of answer.stream) frames.push(frame);
    expect(frames.at(-1)).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"api_error","message":"upstream hung up"}}\n\n',
    );

    // The official client, served by the handler, reads the frames and raises the error.
    const texts: string[] = [];
    const stream = clientOf(broken).messages.stream({
      model: 'broken-midway',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    stream.on('text', (text) => texts.push(text));
    const failure = await stream.finalMessage().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(texts).toEqual(['partial ']);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).type).toBe('api_error');
    expect((failure as APIError).message).toContain('upstream hung up');
  });

  it('streams thinking with its signature, and hands a thinking block sent back to the model with it', async () => {
    const seen: LanguageModelV4CallOptions[] = [];
    const thinker = streamingModel('thinker', () => [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Let me think. ' },
      { type: 'reasoning-delta', id: 'r', delta: 'Done.' },
      {
        type: 'reasoning-delta',
        id: 'r',
        delta: '',
        providerMetadata: { anthropic: { signature: 'sig-1' } },
      },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Forty-two.' },
      { type: 'text-end', id: 't' },
      {
        type: 'finish',
        finishReason: { unified: 'length', raw: 'max_tokens' },
        usage: {
          inputTokens: { total: 30, noCache: 10, cacheRead: 20, cacheWrite: 0 },
          outputTokens: { total: 7, text: 3, reasoning: 4 },
        },
      },
    ]);
    const recording: LanguageModelV4 = {
      ...thinker,
      doStream: (options) => {
        seen.push(options);
        return thinker.doStream(options);
      },
    };
    const message = await clientOf(recording)
      .messages.stream({
        model: 'thinker',
        max_tokens: 64,
        thinking: { type: 'enabled', budget_tokens: 32 },
        tools: [lookup, { type: 'web_search_20250305', name: 'web_search' }],
        tool_choice: { type: 'tool', name: 'lookup' },
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'the answer?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
              { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'a note' } },
              { type: 'document', source: { type: 'file', file_id: 'file_011' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Earlier thought.', signature: 'sig-0' },
              { type: 'redacted_thinking', data: 'opaque' },
              { type: 'text', text: 'Hm.' },
            ],
          },
          { role: 'user', content: 'and now?' },
        ],
      })
      .finalMessage();
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'Let me think. Done.', signature: 'sig-1' },
      { type: 'text', text: 'Forty-two.' },
    ]);
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.usage).toMatchObject({ input_tokens: 10, cache_read_input_tokens: 20, output_tokens: 7 });
    // Anthropic's server tools and a file known only by its Files API id are not served: left out.
    expect(seen[0]!.tools?.map((t) => t.name)).toEqual(['lookup']);
    expect(seen[0]!.toolChoice).toEqual({ type: 'tool', toolName: 'lookup' });
    expect(seen[0]!.prompt[0]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'the answer?' },
        { type: 'file', data: { type: 'data', data: 'iVBORw0KGgo=' }, mediaType: 'image/png' },
        { type: 'file', data: { type: 'text', text: 'a note' }, mediaType: 'text/plain' },
      ],
    });
    expect(seen[0]!.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'reasoning',
          text: 'Earlier thought.',
          providerOptions: { anthropic: { signature: 'sig-0' } },
        },
        { type: 'reasoning', text: '', providerOptions: { anthropic: { redactedData: 'opaque' } } },
        { type: 'text', text: 'Hm.' },
      ],
    });
  });
});

/** The official client served in-process by the dialect's handler, over one stand-in model. */
function clientOf(model: LanguageModelV4): Anthropic {
  return new Anthropic({
    apiKey: 'unused',
    maxRetries: 0,
    fetch: async (_url, init) => {
      const answer = await handleAnthropicMessages(
        { resolve: () => model },
        JSON.parse(String(init?.body)),
        new AbortController().signal,
      );
      if ('json' in answer) {
        return Response.json(answer.json, { status: answer.status });
      }
      const frames = answer.stream[Symbol.asyncIterator]();
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const next = await frames.next();
          if (next.done) controller.close();
          else controller.enqueue(new TextEncoder().encode(next.value));
        },
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    },
  });
}
