import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createModelRouter, handleChatCompletions } from '@paddock/models';

export interface TestServer {
  port: number;
  close(): Promise<void>;
}

/**
 * Stands in for the Paddock server: `GET /hello` for network tests and the model gateway at
 * `/v2/gateway/openai/v1/chat/completions`, served by the real `handleChatCompletions`.
 */
export async function startTestServer(): Promise<TestServer> {
  const router = createModelRouter({});
  const server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      response.writeHead(500).end(String(error));
    });
  });
  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method === 'GET' && request.url === '/hello') {
      response.writeHead(200, { 'content-type': 'text/plain' }).end('hello from the host\n');
      return;
    }
    if (request.method !== 'POST' || request.url !== '/v2/gateway/openai/v1/chat/completions') {
      response.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const disconnected = new AbortController();
    response.on('close', () => disconnected.abort());
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const answer = await handleChatCompletions(router, body, disconnected.signal);
    if ('stream' in answer) {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      for await (const frame of answer.stream) response.write(frame);
      response.end();
      return;
    }
    response
      .writeHead(answer.status, { 'content-type': 'application/json' })
      .end(JSON.stringify(answer.json));
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
