import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { PaddockError, type Services } from '@paddock/core';
import { timestamp, tusUploadPath } from '@paddock/protocol';
import { type Db, findFileTransfer, findThreadHome } from '@paddock/store';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** Set on a request one node forwards to another: the receiving node serves it, whatever it finds. */
const forwardedHeader = 'x-paddock-forwarded-by';

type Params = Record<string, string | undefined>;

/** The thread a request's params name, directly or through its upload. */
const byTask = async (_db: Db, params: Params) => params.task_id;
const byThread = async (_db: Db, params: Params) => params.thread_id;
const byTransfer = async (db: Db, params: Params) =>
  params.transfer_id === undefined ? undefined : (await findFileTransfer(db, params.transfer_id))?.thread_id;

/**
 * The requests that need the thread's workspace or sandbox, or its running turn: its files, uploads
 * (whose parts the node's upload store keeps), code runs, follow-ups (steered into the running turn)
 * and Stop (which waits for the steering under way).
 */
const homeRoutes = new Map<string, (db: Db, params: Params) => Promise<string | undefined>>([
  ['GET /v2/tasks/:task_id/files', byTask],
  ['GET /v2/tasks/:task_id/files/tree', byTask],
  ['GET /v2/tasks/:task_id/files/content', byTask],
  ['POST /v2/tasks/:task_id/code/run/sync', byTask],
  ['GET /v2/tasks/:task_id/code/capabilities', byTask],
  ['POST /v2/tasks/:task_id/files/uploads', byTask],
  ['GET /v2/tasks/:task_id/files/uploads/:transfer_id', byTask],
  ['DELETE /v2/tasks/:task_id/files/uploads/:transfer_id', byTask],
  ['POST /v2/tasks/:resource_id/files/uploads/:transfer_id/authorize', byTransfer],
  ...['HEAD', 'PATCH', 'DELETE', 'OPTIONS'].map(
    (method) => [`${method} ${tusUploadPath}/:transfer_id`, byTransfer] as const,
  ),
  ['POST /v2/tasks/:task_id/inputs', byTask],
  ['POST /v2/tasks/:task_id/interrupt', byTask],
  ['POST /v2/threads/:thread_id/messages', byThread],
  ['POST /v2/threads/:thread_id/interrupt', byThread],
]);

/**
 * Headers of one hop only, which a proxy does not pass on. `Host` goes on as the client sent it: the
 * answer's absolute URLs (a signed upload URL) name the server as the client reached it.
 */
const hopByHop = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Many nodes on one database: a thread's workspace lives on one machine, which one node reaches
 * (`machines`). A request that needs it, arriving at another node, is passed to that node as it
 * came (the body streamed, the credential with it: that node authenticates it) and its answer
 * passed back. A thread whose machine no live node reaches is served where the request arrives.
 */
export function installThreadHomes(app: FastifyInstance, services: Pick<Services, 'store' | 'nodeId'>): void {
  const { store, nodeId } = services;
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers[forwardedHeader] !== undefined) return;
    const locate = homeRoutes.get(`${request.method} ${request.routeOptions.url}`);
    const threadId = locate && (await locate(store.db, request.params as Params));
    if (!threadId) return;
    const home = await findThreadHome(store.db, threadId, timestamp());
    if (!home || home.nodeId === nodeId) return;
    return forward(request, reply, home.nodeUrl, nodeId);
  });
}

async function forward(
  request: FastifyRequest,
  reply: FastifyReply,
  nodeUrl: string,
  nodeId: string,
): Promise<FastifyReply> {
  const target = new URL(request.url, nodeUrl);
  const headers: IncomingHttpHeaders = { [forwardedHeader]: nodeId };
  for (const [name, value] of Object.entries(request.headers))
    if (!hopByHop.has(name) && name !== forwardedHeader) headers[name] = value;
  // As any proxy: the address this node saw, for a node that trusts it (PADDOCK_TRUST_PROXY).
  const client = request.socket.remoteAddress;
  if (client)
    headers['x-forwarded-for'] = [request.headers['x-forwarded-for'], client].filter(Boolean).join(', ');
  const answer = await new Promise<IncomingMessage>((resolve, reject) => {
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const upstream = send(target, { method: request.method, headers }, resolve);
    upstream.on('error', reject);
    // The client went away: so does the forwarded request.
    reply.raw.on('close', () => {
      if (!reply.raw.writableFinished) upstream.destroy();
    });
    request.raw.pipe(upstream);
  }).catch((error: unknown) => {
    request.log.warn({ err: error, node_url: nodeUrl }, 'forwarding to the node holding the thread failed');
    throw new PaddockError('unavailable', 'the server node holding this thread is not reachable', {
      retryAfter: 2,
    });
  });
  reply.code(answer.statusCode ?? 502);
  for (const [name, value] of Object.entries(answer.headers))
    if (value !== undefined && !hopByHop.has(name)) reply.header(name, value);
  return reply.send(answer);
}
