import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { streamingModel } from '@paddock/testing/gateway';
import { describe, expect, it } from 'vitest';
import { handleGemini } from '../src/gateway/gemini/handle-gemini.ts';
import { createModelRouter } from '../src/model-router.ts';

const router = createModelRouter({});
const seenCalls: LanguageModelV4CallOptions[] = [];
// Records what the handler passed to the model; the model itself is the real scripted one.
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

const brokenMidwayModel = streamingModel('broken-midway', () => [
  { type: 'text-start', id: 't' },
  { type: 'text-delta', id: 't', delta: 'partial ' },
  { type: 'error', error: new Error('upstream hung up') },
]);

const handle = (modelPath: string, body: unknown) =>
  handleGemini(recordingRouter, body, new AbortController().signal, modelPath);

async function frames(answer: Awaited<ReturnType<typeof handle>>): Promise<string[]> {
  if (!('stream' in answer)) throw new Error(`not a stream: ${JSON.stringify(answer.json)}`);
  const out: string[] = [];
  for await (const frame of answer.stream) out.push(frame);
  return out;
}

describe('the Gemini dialect', () => {
  it('translates history, tools, tool config and generation config into the call options', async () => {
    const answer = await handle('scripted:generateContent', {
      systemInstruction: { parts: [{ text: 'be ' }, { text: 'brief' }] },
      contents: [
        { role: 'user', parts: [{ text: 'look twice' }] },
        {
          role: 'model',
          parts: [
            { text: 'planning', thought: true },
            { functionCall: { name: 'look', args: { at: 'a' } } },
            { functionCall: { name: 'look', args: { at: 'b' } } },
            { functionCall: { id: 'own-id', name: 'other', args: {} } },
          ],
        },
        {
          role: 'user',
          parts: [
            // Answered out of order: by id when there is one, else the oldest call of that name.
            { functionResponse: { id: 'own-id', name: 'other', response: { output: 'o' } } },
            { functionResponse: { name: 'look', response: { output: 'A' } } },
            { functionResponse: { name: 'look', response: { output: 'B' } } },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'look',
              description: 'Look at something',
              parameters: {
                type: 'OBJECT',
                properties: {
                  at: { type: 'STRING', nullable: true },
                  tags: { type: 'ARRAY', items: { type: 'STRING' }, minItems: '1' },
                },
                required: ['at'],
                propertyOrdering: ['at', 'tags'],
              },
            },
            { name: 'other', parametersJsonSchema: { type: 'object', properties: {} } },
            { name: 'bare' },
          ],
        },
        { googleSearch: {} },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['look'] } },
      generationConfig: {
        temperature: 0.5,
        topP: 0.9,
        maxOutputTokens: 64,
        stopSequences: ['END'],
        thinkingConfig: { thinkingBudget: 100 },
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { ok: { type: 'BOOLEAN' } } },
      },
    });
    expect(answer.status).toBe(200);
    const call = seenCalls.at(-1)!;
    expect(call.prompt).toEqual([
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'look twice' }] },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'planning' },
          { type: 'tool-call', toolCallId: 'gemini-call-1', toolName: 'look', input: { at: 'a' } },
          { type: 'tool-call', toolCallId: 'gemini-call-2', toolName: 'look', input: { at: 'b' } },
          { type: 'tool-call', toolCallId: 'own-id', toolName: 'other', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'own-id',
            toolName: 'other',
            output: { type: 'json', value: { output: 'o' } },
          },
          {
            type: 'tool-result',
            toolCallId: 'gemini-call-1',
            toolName: 'look',
            output: { type: 'json', value: { output: 'A' } },
          },
          {
            type: 'tool-result',
            toolCallId: 'gemini-call-2',
            toolName: 'look',
            output: { type: 'json', value: { output: 'B' } },
          },
        ],
      },
    ]);
    expect(call.tools).toEqual([
      {
        type: 'function',
        name: 'look',
        description: 'Look at something',
        inputSchema: {
          type: 'object',
          properties: {
            at: { type: ['string', 'null'] },
            tags: { type: 'array', items: { type: 'string' }, minItems: 1 },
          },
          required: ['at'],
        },
      },
    ]);
    expect(call.toolChoice).toEqual({ type: 'tool', toolName: 'look' });
    expect(call).toMatchObject({
      temperature: 0.5,
      topP: 0.9,
      maxOutputTokens: 64,
      stopSequences: ['END'],
      responseFormat: { type: 'json', schema: { type: 'object', properties: { ok: { type: 'boolean' } } } },
    });
    // The scripted model quotes the results it was sent.
    expect(answer).toMatchObject({
      json: {
        candidates: [
          { content: { role: 'model', parts: [{ text: expect.stringContaining('look: {"output":"A"}') }] } },
        ],
      },
    });
  });

  it("takes gemini-cli's resumed history: text parts kept apart, a function response sent twice taken once", async () => {
    // What gemini-cli 0.61 sent on `--resume`: its session context and prompt as two parts of one
    // turn, and the shell call's response twice with the same id.
    const response = { output: 'Output: hi-from-shell' };
    const answer = await handle('scripted:streamGenerateContent', {
      contents: [
        {
          role: 'user',
          parts: [{ text: '<session_context>\nctx\n</session_context>' }, { text: '::sh echo hi' }],
        },
        {
          role: 'model',
          parts: [
            { text: 'running it' },
            {
              functionCall: { id: 'call_1', name: 'run_shell_command', args: { command: 'echo hi' } },
              thoughtSignature: 'skip_thought_signature_validator',
            },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { id: 'call_1', name: 'run_shell_command', response } },
            { functionResponse: { id: 'call_1', name: 'run_shell_command', response } },
          ],
        },
        { role: 'model', parts: [{ text: 'done' }] },
        { role: 'user', parts: [{ text: '::seen hi-from-shell' }] },
      ],
    });
    expect(answer.status).toBe(200);
    await frames(answer);
    expect(seenCalls.at(-1)!.prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: '<session_context>\nctx\n</session_context>' },
          { type: 'text', text: '::sh echo hi' },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'running it' },
          {
            type: 'tool-call',
            toolCallId: 'call_1',
            toolName: 'run_shell_command',
            input: { command: 'echo hi' },
          },
        ],
      },
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_1',
            toolName: 'run_shell_command',
            output: { type: 'json', value: response },
          },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'done' }] },
      { role: 'user', content: [{ type: 'text', text: '::seen hi-from-shell' }] },
    ]);
  });

  it('maps each function calling mode to a tool choice', async () => {
    const tools = [{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }];
    for (const [mode, choice] of [
      ['AUTO', { type: 'auto' }],
      ['ANY', { type: 'required' }],
      ['NONE', { type: 'none' }],
      [undefined, undefined],
    ] as const) {
      await handle('scripted:generateContent', {
        contents: [{ parts: [{ text: 'hi' }] }],
        tools,
        toolConfig: mode ? { functionCallingConfig: { mode } } : undefined,
      });
      expect(seenCalls.at(-1)!.toolChoice, mode).toEqual(choice);
      expect(seenCalls.at(-1)!.tools?.map((t) => t.name)).toEqual(['a', 'b']);
    }
  });

  it('answers a bad body with 400, an unknown model or method with 404, in Gemini error bodies', async () => {
    expect(await handle('scripted:generateContent', { contents: [] })).toMatchObject({
      status: 400,
      json: { error: { code: 400, status: 'INVALID_ARGUMENT' } },
    });
    const body = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
    for (const path of [
      'openai/gpt-x:generateContent',
      'scripted:countTokens',
      'scripted',
      ':generateContent',
    ]) {
      expect(await handle(path, body), path).toMatchObject({
        status: 404,
        json: { error: { code: 404, status: 'NOT_FOUND' } },
      });
    }
  });

  it('streams SSE chunks and ends a stream that fails midway with an error chunk', async () => {
    const ok = await frames(
      await handle('scripted:streamGenerateContent', {
        contents: [{ role: 'user', parts: [{ text: 'two words' }] }],
      }),
    );
    expect(ok.every((f) => f.startsWith('data: {') && f.endsWith('}\n\n'))).toBe(true);
    const last = JSON.parse(ok.at(-1)!.slice('data: '.length));
    expect(last).toMatchObject({
      candidates: [{ finishReason: 'STOP', index: 0 }],
      usageMetadata: { totalTokenCount: expect.any(Number) },
      modelVersion: 'scripted',
    });

    const broken = await frames(
      await handle('broken-midway:streamGenerateContent', {
        contents: [{ role: 'user', parts: [{ text: 'x' }] }],
      }),
    );
    expect(broken.some((f) => f.includes('"text":"partial "'))).toBe(true);
    expect(broken.at(-1)).toBe(
      'data: {"error":{"code":502,"message":"upstream hung up","status":"UNAVAILABLE"}}\n\n',
    );
  });
});
