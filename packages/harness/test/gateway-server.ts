import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleChatCompletions, type ModelRouter } from '@paddock/models';

/**
 * The real model gateway behind a bare node:http server on 127.0.0.1, recording every request
 * body so tests can see what the harness sent.
 */
export async function startGatewayServer(router: Pick<ModelRouter, 'resolve'>) {
  const bodies: { model: string; messages: { role: string; content: unknown; tool_calls?: unknown }[] }[] =
    [];
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const body = JSON.parse(Buffer.concat(await req.toArray()).toString('utf8'));
    bodies.push(body);
    const result = await handleChatCompletions(router, body, controller.signal);
    if (!('stream' in result)) {
      res.writeHead(result.status, { 'content-type': 'application/json' }).end(JSON.stringify(result.json));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for await (const frame of result.stream) {
      if (res.destroyed) break;
      if (!res.write(frame)) await once(res, 'drain');
    }
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    gateway: { baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test-token' },
    bodies,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
