import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gatewayModels } from '@paddock/harness';
import { testSandboxHands } from '@paddock/testing/supervisor';
import type { ModelMessage } from 'ai';
import { runAgentLoop } from '../packages/harness/src/coding-alpha/agent-loop.ts';
import { percentiles } from './stats.ts';

/**
 * The built-in harness's own time per model call, outside any sandbox: from a turn's start to its
 * request reaching a model server (building the request: tools, messages), and from the model's
 * first frame leaving that server to the harness emitting the chunk (parsing the stream). The
 * model answers at once, on loopback; `turns` turns on one growing conversation, after a warm-up.
 */
export async function measureHarnessOverhead(turns: number) {
  let requestAt = 0;
  let frameAt = 0;
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'b', object: 'chat.completion.chunk', created: 0, model: 'bench', choices: [{ index: 0, delta, finish_reason: null, ...extra }] })}\n\n`;
  const model = createServer((request, response) => {
    requestAt = performance.now();
    request.resume();
    request.on('end', () => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      frameAt = performance.now();
      response.write(chunk({ role: 'assistant', content: 'hello' }));
      response.end(`${chunk({}, { finish_reason: 'stop' })}data: [DONE]\n\n`);
    });
  });
  await new Promise<void>((resolve) => model.listen(0, '127.0.0.1', resolve));
  const { port } = model.address() as { port: number };
  const workspaceDir = mkdtempSync(join(tmpdir(), 'paddock-bench-harness-'));
  // The turns run no tool, but the loop takes the sandbox's hands as a runner gives them.
  const sandbox = await testSandboxHands();
  const messages: ModelMessage[] = [];
  const toRequest: number[] = [];
  const toChunk: number[] = [];
  try {
    const warmUp = 20;
    for (let i = 0; i < warmUp + turns; i++) {
      messages.push({ role: 'user', content: `message ${i}` });
      const started = performance.now();
      let emittedAt = 0;
      const result = await runAgentLoop(
        {
          turnId: `bench-${i}`,
          model: 'bench',
          messages: [...messages],
          models: gatewayModels(`http://127.0.0.1:${port}/v1`, 'bench'),
          gateway: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'bench' },
          sandbox,
          workspaceDir,
          env: { PATH: process.env.PATH ?? '' },
          signal: new AbortController().signal,
          emit: (event) => {
            if (event.type === 'assistant.message.chunk' && emittedAt === 0) emittedAt = performance.now();
          },
        },
        { systemPrompt: 'You answer the bench.', shell: true },
      );
      messages.push(...result.messages);
      if (i < warmUp) continue;
      toRequest.push(requestAt - started);
      toChunk.push(emittedAt - frameAt);
    }
  } finally {
    model.close();
    rmSync(workspaceDir, { recursive: true, force: true });
  }
  return { turn_to_model_request_ms: percentiles(toRequest), model_frame_to_chunk_ms: percentiles(toChunk) };
}
