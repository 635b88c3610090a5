import { request as httpRequest } from 'node:http';
import { handleResponses, responsesRequestSchema, toResponsesCallOptions } from '@paddock/models';
import { sumOrgModelTokens } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { streamingModel } from '@paddock/testing/gateway';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith } from './helpers.ts';

// Fields Codex sends that the openai client's types do not know.
const codexOnly = { client_metadata: { originator: 'codex_exec' } };

const lookup = {
  name: 'lookup',
  description: 'Looks a word up',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

describe.each(testDatabases())(
  'the OpenAI gateway dialect, called with the openai client, on $name',
  (database) => {
    let server: TestServer;
    let client: OpenAI;
    let token: string;
    beforeAll(async () => {
      server = await startTestServer(database);
      token = await adminTokenWith(server, ['publish']);
      client = openAIClient(token);
    });
    afterAll(() => server.close());

    const openAIClient = (apiKey: string) =>
      new OpenAI({ apiKey, baseURL: `${server.url}/v2/gateway/openai/v1`, maxRetries: 0 });

    describe('Chat Completions', () => {
      it('answers text', async () => {
        const completion = await client.chat.completions.create({
          model: 'scripted',
          messages: [{ role: 'user', content: 'hello there' }],
        });
        expect(completion.choices[0]?.message.content).toBe('You said: hello there');
        expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
      });

      it('streams text a word at a time, with usage last', async () => {
        const stream = await client.chat.completions.create({
          model: 'scripted',
          messages: [{ role: 'user', content: 'hello there' }],
          stream: true,
          stream_options: { include_usage: true },
        });
        const deltas: string[] = [];
        let usage: OpenAI.CompletionUsage | null | undefined;
        for await (const chunk of stream) {
          const delta = chunk.choices[0]?.delta.content;
          if (delta) deltas.push(delta);
          usage ??= chunk.usage;
        }
        expect(deltas).toEqual(['You ', 'said: ', 'hello ', 'there']);
        expect(usage?.total_tokens).toBeGreaterThan(0);
      });

      it('calls a tool and answers its result', async () => {
        const tools = [{ type: 'function' as const, function: lookup }];
        const user = { role: 'user' as const, content: '::call lookup {"q":"gull"}' };
        const first = await client.chat.completions.create({ model: 'scripted', messages: [user], tools });
        const call = first.choices[0]?.message.tool_calls?.[0];
        expect(first.choices[0]?.finish_reason).toBe('tool_calls');
        expect(call?.type === 'function' && call.function).toEqual({
          name: 'lookup',
          arguments: '{"q":"gull"}',
        });

        const second = await client.chat.completions.create({
          model: 'scripted',
          tools,
          messages: [
            user,
            first.choices[0]!.message,
            { role: 'tool', tool_call_id: call!.id, content: 'a sea bird' },
          ],
        });
        expect(second.choices[0]?.message.content).toBe('lookup: a sea bird');
      });

      it('raises a failed model call as an APIError (the scripted ::error is a 422: not retryable)', async () => {
        const error = await client.chat.completions
          .create({ model: 'scripted', messages: [{ role: 'user', content: '::error boom' }] })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.APIError);
        expect((error as APIError).status).toBe(422);
        expect((error as APIError).message).toContain('boom');
      });

      it('refuses a bad credential with a 401 the client reads', async () => {
        const error = await openAIClient('pdk_pat_not_a_token')
          .chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }] })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
        expect((error as APIError).code).toBe('invalid_token');
        expect((error as APIError).type).toBe('authentication_error');
      });

      it('lists the models', async () => {
        const ids: string[] = [];
        for await (const model of client.models.list()) ids.push(model.id);
        expect(ids).toContain('scripted');
      });
    });

    describe('Responses', () => {
      it('answers text, with the instructions as system text', async () => {
        const response = await client.responses.create({
          model: 'scripted',
          instructions: 'Mention the albatross.',
          input: 'hello there',
        });
        expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'scripted' });
        expect(response.id).toMatch(/^resp_/);
        expect(response.output_text).toBe('You said: hello there');
        expect(response.output).toEqual([
          expect.objectContaining({ type: 'message', role: 'assistant', id: expect.stringMatching(/^msg_/) }),
        ]);
        expect(response.usage).toMatchObject({
          input_tokens: expect.any(Number),
          output_tokens: expect.any(Number),
          input_tokens_details: { cached_tokens: 0 },
          output_tokens_details: { reasoning_tokens: 0 },
        });
        expect(response.usage!.output_tokens).toBeGreaterThan(0);
        expect(response.usage!.total_tokens).toBe(
          response.usage!.input_tokens + response.usage!.output_tokens,
        );

        const seen = await client.responses.create({
          model: 'scripted',
          instructions: 'Mention the albatross.',
          input: '::seen albatross',
        });
        expect(seen.output_text).toBe('seen: yes');
      });

      it('streams its events in order, text a word at a time, with usage at the end', async () => {
        const stream = client.responses.stream({ model: 'scripted', input: 'hello there' });
        const types: string[] = [];
        const deltas: string[] = [];
        for await (const event of stream) {
          types.push(event.type);
          if (event.type === 'response.output_text.delta') deltas.push(event.delta);
        }
        const response = await stream.finalResponse();
        expect(deltas).toEqual(['You ', 'said: ', 'hello ', 'there']);
        expect(types).toEqual([
          'response.created',
          'response.in_progress',
          'response.output_item.added',
          'response.content_part.added',
          ...deltas.map(() => 'response.output_text.delta'),
          'response.output_text.done',
          'response.content_part.done',
          'response.output_item.done',
          'response.completed',
        ]);
        expect(response.status).toBe('completed');
        expect(response.output_text).toBe('You said: hello there');
        expect(response.usage?.output_tokens).toBeGreaterThan(0);
      });

      it('calls a tool (streamed) and answers its result (sent back as a function_call_output)', async () => {
        const tools = [{ type: 'function' as const, strict: false, ...lookup }];
        const input: OpenAI.Responses.ResponseInputItem[] = [
          { role: 'user', content: [{ type: 'input_text', text: '::call lookup {"q":"gull"}' }] },
        ];
        const stream = client.responses.stream({ model: 'scripted', input, tools, tool_choice: 'auto' });
        const argumentDeltas: string[] = [];
        stream.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
        const first = await stream.finalResponse();
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call).toMatchObject({
          name: 'lookup',
          arguments: '{"q":"gull"}',
          id: expect.stringMatching(/^fc_/),
        });
        expect(argumentDeltas.join('')).toBe('{"q":"gull"}');

        const second = await client.responses.create({
          model: 'scripted',
          tools,
          input: [
            ...input,
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call!.call_id, output: 'a sea bird' },
          ],
        });
        expect(second.output_text).toBe('lookup: a sea bird');
      });

      it('offers the functions of namespace tools (Codex sends MCP tools so) and calls them by namespace and name', async () => {
        // As Codex 0.169 sends an MCP server `demo` with one tool `shout`.
        const tools: OpenAI.Responses.Tool[] = [
          {
            type: 'namespace',
            name: 'mcp__demo',
            description: 'Tools in the mcp__demo namespace.',
            tools: [
              {
                type: 'function',
                name: 'shout',
                description: 'Upper-cases a word',
                parameters: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] },
                strict: false,
              },
            ],
          },
          { type: 'web_search' },
        ];
        const input: OpenAI.Responses.ResponseInputItem[] = [
          { role: 'user', content: [{ type: 'input_text', text: '::call mcp__demo__shout {"word":"hi"}' }] },
        ];
        const first = await client.responses.stream({ model: 'scripted', input, tools }).finalResponse();
        expect(first.tools).toEqual([tools[0]]);
        const call = first.output.find((item) => item.type === 'function_call');
        expect(call).toMatchObject({ name: 'shout', namespace: 'mcp__demo', arguments: '{"word":"hi"}' });

        const plain = await client.responses.create({ model: 'scripted', input, tools });
        expect(plain.output.find((item) => item.type === 'function_call')).toMatchObject({
          name: 'shout',
          namespace: 'mcp__demo',
        });

        const second = await client.responses.create({
          model: 'scripted',
          tools,
          input: [
            ...input,
            ...(first.output as OpenAI.Responses.ResponseInputItem[]),
            { type: 'function_call_output', call_id: call!.call_id, output: 'SHOUT:HI' },
          ],
        });
        expect(second.output_text).toBe('mcp__demo__shout: SHOUT:HI');
      });

      it('takes what Codex sends: developer items, store:false and the fields it adds', async () => {
        const response = await client.responses.create(
          {
            model: 'scripted',
            input: [
              {
                type: 'message',
                role: 'developer',
                content: [{ type: 'input_text', text: 'You know the pelican.' }],
              },
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'look' }] },
              {
                type: 'reasoning',
                id: 'rs_1',
                summary: [{ type: 'summary_text', text: 'Thinking about birds.' }],
                encrypted_content: 'opaque',
              },
              {
                type: 'message',
                role: 'assistant',
                id: 'msg_1',
                status: 'completed',
                content: [{ type: 'output_text', text: 'Looked.', annotations: [] }],
              },
              { type: 'item_reference', id: 'msg_elsewhere' },
              {
                type: 'message',
                role: 'user',
                content: [
                  { type: 'input_text', text: '::seen pelican' },
                  { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
                ],
              },
            ],
            ...codexOnly,
            store: false,
            include: ['reasoning.encrypted_content'],
            prompt_cache_key: 'thread-1',
            parallel_tool_calls: false,
            reasoning: { effort: 'low' },
            text: { verbosity: 'low' },
            tools: [{ type: 'web_search' }, { type: 'function', strict: false, ...lookup }],
            tool_choice: 'auto',
            stream: false,
          },
          { headers: { 'x-codex-turn-metadata': '{"turn_id":"t1"}' } },
        );
        expect(response.output_text).toBe('seen: yes');
      });

      it('answers a request it cannot serve with a 400 or a 404 the client reads', async () => {
        const invalid = await client.responses
          .create({
            model: 'scripted',
            input: [{ type: 'function_call_output', output: 'no call id' }],
          } as never)
          .catch((e: unknown) => e);
        expect(invalid).toBeInstanceOf(OpenAI.BadRequestError);
        expect((invalid as APIError).code).toBe('invalid_request');
        const nameless = await client.responses
          .create({ model: 'scripted', input: 'hi', tools: [{ type: 'function', parameters: {} }] } as never)
          .catch((e: unknown) => e);
        expect(nameless).toBeInstanceOf(OpenAI.BadRequestError);
        const unknown = await client.responses
          .create({ model: 'nonesuch', input: 'hi' })
          .catch((e: unknown) => e);
        expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
        expect((unknown as APIError).code).toBe('model_not_found');
      });

      it('refuses previous_response_id, since nothing is stored', async () => {
        const error = await client.responses
          .create({ model: 'scripted', input: 'hi', previous_response_id: 'resp_123' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.BadRequestError);
        expect((error as APIError).message).toContain('stores no responses');
      });

      it('raises a failed model call as an APIError (422 for the scripted ::error), streaming or not', async () => {
        for (const stream of [false, true]) {
          const error = await client.responses
            .create({ model: 'scripted', input: '::error boom', stream })
            .catch((e: unknown) => e);
          expect(error).toBeInstanceOf(OpenAI.APIError);
          expect((error as APIError).status).toBe(422);
          expect((error as APIError).message).toContain('boom');
        }
      });

      it('refuses a bad credential with a 401 the client reads', async () => {
        const error = await openAIClient('pdk_pat_not_a_token')
          .responses.create({ model: 'scripted', input: 'hi' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      });

      it('refuses a token without publish with a 403 the client reads', async () => {
        const error = await openAIClient(await adminTokenWith(server, ['read']))
          .responses.create({ model: 'scripted', input: 'hi' })
          .catch((e: unknown) => e);
        expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
        expect((error as APIError).code).toBe('scope_denied');
      });

      it("counts each call's usage to the organization, streamed or not", async () => {
        const db = server.paddock.services.store.db;
        const { id: orgId } = await db.selectFrom('orgs').select('id').executeTakeFirstOrThrow();
        const before = await sumOrgModelTokens(db, orgId);
        const plain = await client.responses.create({ model: 'scripted', input: 'count these words please' });
        const afterPlain = await sumOrgModelTokens(db, orgId);
        expect(afterPlain - before).toBe(plain.usage!.total_tokens);
        const streamed = await client.responses
          .stream({ model: 'scripted', input: 'count these words please' })
          .finalResponse();
        expect(streamed.usage).toEqual(plain.usage);
        expect(await sumOrgModelTokens(db, orgId)).toBe(afterPlain + plain.usage!.total_tokens);
      });

      it('refuses a WebSocket upgrade at once, and a plain GET', async () => {
        const url = new URL(`${server.url}/v2/gateway/openai/v1/responses`);
        const answer = await new Promise<{ status: number; upgraded: boolean; body: string }>(
          (resolve, reject) => {
            const req = httpRequest(url, {
              headers: {
                authorization: `Bearer ${token}`,
                connection: 'Upgrade',
                upgrade: 'websocket',
                'sec-websocket-version': '13',
                'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
                'openai-beta': 'responses_websockets=2026-02-06',
              },
              timeout: 2000,
            });
            req.on('upgrade', (_res, socket) => {
              socket.destroy();
              resolve({ status: 101, upgraded: true, body: '' });
            });
            req.on('response', async (res) => {
              const body = Buffer.concat(await res.toArray()).toString();
              resolve({ status: res.statusCode ?? 0, upgraded: false, body });
            });
            req.on('timeout', () => req.destroy(new Error('no answer to the upgrade')));
            req.on('error', reject);
            req.end();
          },
        );
        expect(answer.upgraded).toBe(false);
        expect(answer.status).toBe(426);
        expect(JSON.parse(answer.body).error.message).toContain('POST');

        const plain = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
        expect(plain.status).toBe(405);
      });
    });
  },
);

// Upstream models the scripted one cannot stand for (reasoning, a failure mid-answer, a cut-off
// answer), behind the real handler; its frames go straight to the openai client, as the route
// writes them.
describe('Responses streams of other upstream models, read by the openai client', () => {
  const clientOf = (parts: () => unknown[]) => {
    const model = streamingModel('upstream', parts);
    return new OpenAI({
      apiKey: 'unused',
      baseURL: 'http://gateway.test/v1',
      maxRetries: 0,
      fetch: async (_url, init) => {
        const answer = await handleResponses(
          { resolve: () => model },
          JSON.parse(String(init?.body)),
          new AbortController().signal,
        );
        if (!('stream' in answer)) return Response.json(answer.json, { status: answer.status });
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
  };
  const usage = {
    inputTokens: { total: 10, noCache: 8, cacheRead: 2, cacheWrite: 0 },
    outputTokens: { total: 7, text: 4, reasoning: 3 },
  };

  it('streams reasoning, text and a call sent whole, as output items in order', async () => {
    const stream = clientOf(() => [
      { type: 'reasoning-start', id: 'r' },
      { type: 'reasoning-delta', id: 'r', delta: 'Let me ' },
      { type: 'reasoning-delta', id: 'r', delta: 'think.' },
      { type: 'reasoning-end', id: 'r' },
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Looking it up.' },
      { type: 'text-end', id: 't' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input: '{"q":"gull"}' },
      { type: 'finish', finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage },
    ]).responses.stream({ model: 'upstream', input: 'hi' });
    const reasoning: string[] = [];
    stream.on('response.reasoning_text.delta', (event) => reasoning.push(event.delta));
    const response = await stream.finalResponse();
    expect(reasoning).toEqual(['Let me ', 'think.']);
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message', 'function_call']);
    expect(response.output[0]).toMatchObject({
      content: [{ type: 'reasoning_text', text: 'Let me think.' }],
    });
    expect(response.output_text).toBe('Looking it up.');
    expect(response.output[2]).toMatchObject({
      call_id: 'call_1',
      name: 'lookup',
      arguments: '{"q":"gull"}',
    });
    expect(response.usage).toEqual({
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 2 },
      output_tokens: 7,
      output_tokens_details: { reasoning_tokens: 3 },
      total_tokens: 17,
    });
  });

  it('ends an answer cut at max_output_tokens with response.incomplete', async () => {
    const stream = clientOf(() => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'Once upon' },
      { type: 'text-end', id: 't' },
      { type: 'finish', finishReason: { unified: 'length', raw: 'length' }, usage },
    ]).responses.stream({ model: 'upstream', input: 'hi', max_output_tokens: 2 });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const response = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.incomplete');
    expect(response).toMatchObject({
      status: 'incomplete',
      incomplete_details: { reason: 'max_output_tokens' },
    });
    expect(response.output_text).toBe('Once upon');
  });

  it('ends an answer that fails midway with response.failed, the partial output kept', async () => {
    const stream = clientOf(() => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'partial ' },
      { type: 'error', error: new Error('upstream hung up') },
    ]).responses.stream({ model: 'upstream', input: 'hi' });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const response = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
    expect(response.status).toBe('failed');
    expect(response.error?.message).toBe('upstream hung up');
    expect(response.output_text).toBe('partial ');
  });

  it('ends with response.failed when the upstream stream stops without finishing', async () => {
    const stream = clientOf(() => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'cut' },
    ]).responses.stream({ model: 'upstream', input: 'hi' });
    const response = await stream.finalResponse();
    expect(response.status).toBe('failed');
    expect(response.error?.message).toBe('the model stream ended before the answer finished');
  });
});

describe('a Responses body as the model sees it', () => {
  it('translates instructions, every item kind, tools and settings into AI SDK call options', () => {
    const body = {
      model: 'scripted',
      instructions: 'Be brief.',
      input: [
        { role: 'developer', content: 'Use tools.' },
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'What is in ' },
            { type: 'input_text', text: 'this picture?' },
            { type: 'input_image', detail: 'auto', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
          ],
        },
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'A bird?' }] },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me look.' }] },
        { type: 'function_call', call_id: 'c1', name: 'lookup', arguments: '{"q":"gull"}' },
        { type: 'function_call', call_id: 'c2', name: 'lookup', arguments: 'not json' },
        { type: 'function_call_output', call_id: 'c1', output: 'a sea bird' },
        { type: 'function_call_output', call_id: 'c2', output: [{ type: 'input_text', text: 'no idea' }] },
        { type: 'local_shell_call', id: 'ls_1', call_id: 'c3', action: {} },
      ],
      tools: [{ type: 'function', ...lookup, strict: true }, { type: 'web_search' }],
      tool_choice: { type: 'function', name: 'lookup' },
      max_output_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
    };
    const options = toResponsesCallOptions(responsesRequestSchema.parse(body));
    expect(options.prompt).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'system', content: 'Use tools.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in ' },
          { type: 'text', text: 'this picture?' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw0KGgo=' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'A bird?' },
          { type: 'text', text: 'Let me look.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: { q: 'gull' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', input: 'not json' },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'c1',
            toolName: 'lookup',
            output: { type: 'text', value: 'a sea bird' },
          },
          {
            type: 'tool-result',
            toolCallId: 'c2',
            toolName: 'lookup',
            output: { type: 'text', value: 'no idea' },
          },
        ],
      },
    ]);
    expect(options.tools).toEqual([
      {
        type: 'function',
        name: 'lookup',
        description: lookup.description,
        inputSchema: lookup.parameters,
        strict: true,
      },
    ]);
    expect(options).toMatchObject({
      toolChoice: { type: 'tool', toolName: 'lookup' },
      maxOutputTokens: 100,
      temperature: 0.2,
      topP: 0.9,
      reasoning: 'high',
    });
  });
});
