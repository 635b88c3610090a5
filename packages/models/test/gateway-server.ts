import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { handleChatCompletions } from '../src/gateway/handle-chat-completions.ts';
import type { ModelRouter } from '../src/model-router.ts';

/** A bare node:http server routing POST /v1/chat/completions to the gateway handler, for tests. */
export async function startGatewayServer(router: Pick<ModelRouter, 'resolve'>) {
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      res.writeHead(404).end();
      return;
    }
    const controller = new AbortController();
    res.on('close', () => controller.abort());
    const raw = Buffer.concat(await req.toArray()).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(raw);
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
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
