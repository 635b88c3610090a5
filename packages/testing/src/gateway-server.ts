import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleChatCompletions, type ModelRouter } from '@paddock/models';

export interface RecordedChatRequest {
  model: string;
  messages: { role: string; content: unknown; tool_calls?: unknown }[];
}

/**
 * The real model gateway handler behind a bare node:http server on 127.0.0.1 (POST
 * /v1/chat/completions), recording every request body so tests can see what a harness sent.
 */
export async function startGatewayServer(router: Pick<ModelRouter, 'resolve'>) {
  const bodies: RecordedChatRequest[] = [];
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    let body: unknown;
    try {
      body = JSON.parse(Buffer.concat(await req.toArray()).toString('utf8'));
      bodies.push(body as RecordedChatRequest);
    } catch {
      body = undefined;
    }
    const result = await handleChatCompletions(router, body, controller.signal);
    if (!('stream' in result)) {
      res.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.json));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for await (const frame of result.stream) {
      if (res.destroyed) break;
      if (!res.write(frame)) await once(res, 'drain');
    }
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const baseURL = `http://127.0.0.1:${port}/v1`;
  return {
    baseURL,
    gateway: { baseURL, apiKey: 'test-token' },
    bodies,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
export { streamingModel } from './streaming-model.ts';
