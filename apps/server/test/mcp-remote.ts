import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface RemoteMcpServer {
  server: Server;
  /** Its MCP endpoint, on loopback: a test server reaches it with `PADDOCK_OUTBOUND_ALLOW: '127.0.0.1'`. */
  url: string;
  /** The header value it requires as `X-Api-Key`: stored on the agent, added by the relay only. */
  apiKey: string;
  /** The `X-Api-Key` of every request at its endpoint. */
  seen: string[];
  close(): Promise<void>;
}

/**
 * A `url` MCP server of an agent (the SDK's own streamable-HTTP server), stateless, with one tool,
 * `lookup`, answering `<word> means remote-answer`; it refuses (403) a request without its key.
 */
export async function startRemoteMcpServer(): Promise<RemoteMcpServer> {
  const apiKey = `key-${randomUUID()}`;
  const seen: string[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    // Only its MCP endpoint counts: a process of another test may knock on a port it once used.
    if (req.url !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    seen.push(String(req.headers['x-api-key']));
    if (req.headers['x-api-key'] !== apiKey) {
      res.writeHead(403).end();
      return;
    }
    const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
    mcp.registerTool(
      'lookup',
      { description: 'Looks a word up', inputSchema: { word: z.string() } },
      async ({ word }) => ({ content: [{ type: 'text', text: `${word} means remote-answer` }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
  };
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    apiKey,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
