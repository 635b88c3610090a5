import { ApiError, type Content, GoogleGenAI, Type } from '@google/genai';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from './control-plane-helpers.ts';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

/** Gemini's dialect of the model gateway, called by Google's own client (`@google/genai`). */
describe.each(testDatabases())('the Gemini gateway on $name', (database) => {
  let server: TestServer;
  let gemini: GoogleGenAI;
  beforeAll(async () => {
    server = await startTestServer(database);
    gemini = client(await adminTokenWith(server, ['publish']));
  });
  afterAll(() => server.close());

  // No retryOptions: the client makes each call once. `@google/genai` 3.x calls API version v1;
  // gemini-cli (an older client) calls v1beta, the version the gateway documents.
  const client = (apiKey: string, apiVersion?: 'v1beta') =>
    new GoogleGenAI({ apiKey, httpOptions: { baseUrl: `${server.url}/v2/gateway/gemini`, apiVersion } });

  /** The error a call raised, which must be the client's ApiError. */
  async function apiError(call: Promise<unknown>): Promise<ApiError> {
    const error: unknown = await call.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    return error as ApiError;
  }

  it('answers generateContent with the text, the finish reason and the usage', async () => {
    const response = await gemini.models.generateContent({
      model: 'scripted',
      contents: 'hello gateway',
      config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 100 },
    });
    expect(response.text).toBe('You said: hello gateway');
    expect(response.candidates?.[0]?.finishReason).toBe('STOP');
    expect(response.modelVersion).toBe('scripted');
    expect(response.responseId).toBeTruthy();
    const usage = response.usageMetadata!;
    expect(usage.promptTokenCount).toBeGreaterThan(0);
    expect(usage.candidatesTokenCount).toBeGreaterThan(0);
    expect(usage.totalTokenCount).toBe(usage.promptTokenCount! + usage.candidatesTokenCount!);
  });

  it('streams generateContentStream as text deltas, the finish reason and usage last', async () => {
    const chunks = [];
    const v1beta = client(await adminTokenWith(server, ['publish']), 'v1beta');
    for await (const chunk of await v1beta.models.generateContentStream({
      model: 'scripted',
      contents: 'stream these words please',
    })) {
      chunks.push(chunk);
    }
    const deltas = chunks.map((c) => c.text ?? '');
    expect(deltas.filter(Boolean).length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe('You said: stream these words please');
    const last = chunks.at(-1)!;
    expect(last.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last.usageMetadata?.totalTokenCount).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => !c.candidates?.[0]?.finishReason && !c.usageMetadata)).toBe(true);
  });

  it('makes a function call and answers its functionResponse, with the call ids or without them', async () => {
    // Gemini's OpenAPI-style schema (upper-case types), normalized to JSON Schema for the model.
    const tools = [
      {
        functionDeclarations: [
          {
            name: 'get_weather',
            description: 'The weather in a city',
            parameters: {
              type: Type.OBJECT,
              properties: { city: { type: Type.STRING }, days: { type: Type.INTEGER, nullable: true } },
              required: ['city'],
            },
          },
          {
            name: 'get_time',
            parametersJsonSchema: { type: 'object', properties: { zone: { type: 'string' } } },
          },
        ],
      },
    ];
    const ask: Content = { role: 'user', parts: [{ text: '::call get_weather {"city":"Paris"}' }] };
    const first = await gemini.models.generateContent({
      model: 'scripted',
      contents: [ask],
      config: { tools },
    });
    expect(first.candidates?.[0]?.finishReason).toBe('STOP');
    const [call] = first.functionCalls ?? [];
    expect(call).toMatchObject({ name: 'get_weather', args: { city: 'Paris' } });
    expect(call!.id).toBeTruthy();

    const answered = (withIds: boolean): Content[] => [
      ask,
      { role: 'model', parts: [{ functionCall: withIds ? call : { name: call!.name, args: call!.args } }] },
      {
        role: 'user',
        parts: [
          {
            functionResponse: {
              ...(withIds ? { id: call!.id } : {}),
              name: 'get_weather',
              response: { output: 'sunny, 21C' },
            },
          },
        ],
      },
    ];
    const second = await gemini.models.generateContent({
      model: 'scripted',
      contents: answered(true),
      config: { tools },
    });
    expect(second.text).toBe('get_weather: {"output":"sunny, 21C"}');
    expect(second.functionCalls).toBeUndefined();

    // Gemini may leave the ids out: the response finds its call by name. Streamed this time.
    let streamed = '';
    for await (const chunk of await gemini.models.generateContentStream({
      model: 'scripted',
      contents: answered(false),
      config: { tools },
    })) {
      streamed += chunk.text ?? '';
    }
    expect(streamed).toBe('get_weather: {"output":"sunny, 21C"}');

    // A function call streamed comes whole, in one chunk.
    const calls = [];
    for await (const chunk of await gemini.models.generateContentStream({
      model: 'scripted',
      contents: '::call get_time {"zone":"UTC"}',
      config: { tools },
    })) {
      calls.push(...(chunk.functionCalls ?? []));
    }
    expect(calls).toEqual([{ id: expect.any(String), name: 'get_time', args: { zone: 'UTC' } }]);
  });

  it("keeps a turn's text parts apart, as gemini-cli sends its session context and the prompt", async () => {
    // gemini-cli 0.61's first turn: a `<session_context>` part, then the prompt, in one user turn,
    // with its shell and write tools declared as JSON Schema.
    const tools = [
      {
        functionDeclarations: [
          {
            name: 'run_shell_command',
            description: 'This tool executes a given shell command as `bash -c <command>`.',
            parametersJsonSchema: {
              type: 'object',
              properties: {
                command: {
                  type: 'string',
                  description: 'Exact bash command to execute as `bash -c <command>`',
                },
                description: { type: 'string' },
                dir_path: { type: 'string' },
                is_background: { type: 'boolean' },
              },
              required: ['command'],
            },
          },
          {
            name: 'write_file',
            description: 'Writes content to a specified file in the local filesystem.',
            parametersJsonSchema: {
              type: 'object',
              properties: {
                file_path: { type: 'string', description: 'The path to the file to write to.' },
                content: { type: 'string' },
              },
              required: ['file_path', 'content'],
            },
          },
        ],
      },
    ];
    const context = '<session_context>\nThis is the Gemini CLI.\n</session_context>';
    const turn = (prompt: string): Content[] => [
      { role: 'user', parts: [{ text: context }, { text: prompt }] },
    ];
    const v1beta = client(await adminTokenWith(server, ['publish']), 'v1beta');
    const calls = async (prompt: string) => {
      const made = [];
      for await (const chunk of await v1beta.models.generateContentStream({
        model: 'scripted',
        contents: turn(prompt),
        config: { tools },
      })) {
        made.push(...(chunk.functionCalls ?? []));
      }
      return made.map(({ name, args }) => ({ name, args }));
    };
    expect(await calls('::sh echo hi-from-shell')).toEqual([
      { name: 'run_shell_command', args: { command: 'echo hi-from-shell' } },
    ]);
    expect(await calls('::write notes.txt\nx\n::end')).toEqual([
      { name: 'write_file', args: { file_path: 'notes.txt', content: 'x\n' } },
    ]);
  });

  it("passes a model failure on as Gemini's error, streaming or not, and an unknown model as NOT_FOUND", async () => {
    const failed = await apiError(
      gemini.models.generateContent({ model: 'scripted', contents: '::error boom' }),
    );
    expect(failed.status).toBe(422);
    expect(JSON.parse(failed.message)).toEqual({
      error: { code: 422, message: 'boom', status: 'FAILED_PRECONDITION' },
    });

    const streamFailed = await apiError(
      gemini.models.generateContentStream({ model: 'scripted', contents: '::error boom' }),
    );
    expect(streamFailed.status).toBe(422);
    expect(streamFailed.message).toContain('boom');

    // A model id holding `/` reaches the router whole, sent as it is or as `%2F`.
    for (const id of ['anthropic/nope', 'anthropic%2Fnope']) {
      const unknown = await apiError(gemini.models.generateContent({ model: id, contents: 'hi' }));
      expect(unknown.status, id).toBe(404);
      expect(JSON.parse(unknown.message), id).toEqual({
        error: { code: 404, status: 'NOT_FOUND', message: 'models/anthropic/nope is not found' },
      });
    }
  });

  it("refuses a bad key with a 401 and an agent key with a 403, in Gemini's error body", async () => {
    const refused = await apiError(
      client('pdk_pat_not_a_token').models.generateContent({ model: 'scripted', contents: 'hi' }),
    );
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } });

    const listed = await apiError(client('pdk_pat_not_a_token').models.list());
    expect(listed.status).toBe(401);

    // An agent key may not call the gateway: a 403, in Gemini's body too.
    const { agent_id } = await createAgent(server, agentSpec());
    const key = await json<{ key: string }>(
      await server.request('POST', `/v2/cli/agents/${agent_id}/keys`, { body: { name: 'gemini' } }),
      201,
    );
    const forbidden = await apiError(
      client(key.key).models.generateContent({ model: 'scripted', contents: 'hi' }),
    );
    expect(forbidden.status).toBe(403);
    expect(JSON.parse(forbidden.message)).toMatchObject({
      error: { code: 403, status: 'PERMISSION_DENIED' },
    });
  });

  it('lists the models and describes one', async () => {
    const names = [];
    for await (const model of await gemini.models.list()) names.push(model.name);
    expect(names).toContain('models/scripted');

    const model = await gemini.models.get({ model: 'scripted' });
    expect(model).toMatchObject({
      name: 'models/scripted',
      displayName: 'scripted',
      supportedActions: ['generateContent', 'streamGenerateContent'],
    });
    const missing = await apiError(gemini.models.get({ model: 'anthropic/nope' }));
    expect(missing.status).toBe(404);
  });
});
