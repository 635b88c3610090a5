import { Readable } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { relayMcpRequest, type Services } from '@paddock/core';
import { threadParamsSchema } from '@paddock/protocol';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { clientGone, ctxOf } from '../context.ts';
import { rawBody } from '../openapi.ts';

/** The response headers of the MCP exchange passed back to the sandbox. */
const answeredHeaders = ['content-type', 'mcp-session-id', 'cache-control'];

/** The largest JSON-RPC message relayed. */
const bodyLimit = 4 * 1024 * 1024;

/**
 * The MCP relay (`/v2/threads/{thread_id}/mcp/{server_name}`): a sandbox reaches its agent's `url`
 * MCP servers here, with its thread token, over streamable HTTP (POST messages, GET the server's
 * stream, DELETE the session). Bodies pass as they are, so this scope reads every body raw.
 */
export async function mcpRelayRoutes(app: FastifyInstance, services: Services): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) =>
      done(null, body),
    );
    const operations = [
      ['POST', 'relayMcpMessage', 'Send a JSON-RPC message to one of the agent’s url MCP servers (relayed)'],
      ['GET', 'relayMcpStream', 'Open the server’s stream of one of the agent’s url MCP servers (relayed)'],
      ['DELETE', 'relayMcpSessionEnd', 'End the session with one of the agent’s url MCP servers (relayed)'],
    ] as const;
    for (const [method, operationId, summary] of operations)
      scope.withTypeProvider<ZodTypeProvider>().route({
        method,
        url: '/v2/threads/:thread_id/mcp/:server_name',
        config: { auth: { scope: 'publish' } },
        schema: {
          operationId,
          summary,
          params: threadParamsSchema.extend({ server_name: z.string().min(1).max(100) }),
          errors: ['thread_not_found', 'mcp_server_not_found', 'mcp_server_unreachable'],
          response: {
            200: rawBody(
              "The MCP server's answer as it sent it (JSON, or server-sent events); its other statuses pass too",
              'application/json',
              'text/event-stream',
            ),
          },
        },
        handler: async (request, reply) => {
          const answer = await relayMcpRequest(ctxOf(services, request), services, {
            threadId: request.params.thread_id,
            serverName: request.params.server_name,
            method,
            headers: request.headers,
            body: Buffer.isBuffer(request.body) ? request.body.toString('utf8') : undefined,
            // The sandbox going away ends the upstream exchange (a server's stream included).
            signal: clientGone(reply),
          });
          // Whatever status the server answered (documented as 200 and the relay's own errors).
          reply.code(answer.status as 200);
          for (const name of answeredHeaders) {
            const value = answer.headers.get(name);
            if (value !== null) reply.header(name, value);
          }
          if (!answer.body) return reply.send();
          return reply.send(Readable.fromWeb(answer.body as WebReadableStream<Uint8Array>));
        },
      });
  });
}
