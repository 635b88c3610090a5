import { request as httpRequest } from 'node:http';
import { handleResponses } from '@paddock/models';
import { sumOrgModelTokens } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { streamingModel } from '@paddock/testing/gateway';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import OpenAI, { type APIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith } from './helpers.ts';

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
              { type: 'message', role: 'user', content: [{ type: 'input_text', text: '::seen pelican' }] },
            ],
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

describe('the Responses stream of a model that fails mid-answer', () => {
  it('ends with response.failed, which the openai client reads, the partial output kept', async () => {
    const broken = streamingModel('broken-midway', () => [
      { type: 'text-start', id: 't' },
      { type: 'text-delta', id: 't', delta: 'partial ' },
      { type: 'error', error: new Error('upstream hung up') },
    ]);
    // The handler's frames go straight to the client, as the route writes them.
    const client = new OpenAI({
      apiKey: 'unused',
      baseURL: 'http://gateway.test/v1',
      maxRetries: 0,
      fetch: async (_url, init) => {
        const answer = await handleResponses(
          { resolve: () => broken },
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
    const stream = client.responses.stream({ model: 'broken-midway', input: 'hi' });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const response = await stream.finalResponse();
    expect(types.at(-1)).toBe('response.failed');
    expect(types).not.toContain('response.completed');
    expect(response.status).toBe('failed');
    expect(response.error?.message).toBe('upstream hung up');
    expect(response.output_text).toBe('partial ');
  });
});
