import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type ServerResponse,
  STATUS_CODES,
} from 'node:http';
import { type AddressInfo, connect, isIP, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type AddressRange, blockListOf, type EventData, isAddressAllowed } from '@paddock/protocol';
import { pipeSockets } from '../pipe-sockets.ts';
import type { EgressPolicy } from './network-policy.ts';

/**
 * One connection through the proxy, reported when it ends (the thread's `network.request` event).
 * `allowed: false` means the proxy sent nothing anywhere: the policy refused the name, an address
 * was not allowed, or the name did not resolve. `allowed: true` with a `reason` means the checks
 * passed but the upstream could not be reached. Bytes are those of the upstream connection (for
 * plain HTTP, request and response heads included); 0 when there was none. Plain HTTP is reported
 * per request, CONNECT per tunnel.
 */
export type EgressRecord = EventData['network.request'];

/** Name resolution, shaped like `dns.lookup` with `all: true`. */
export type EgressLookup = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export interface EgressProxyOptions {
  /** A unix socket (what a sandbox gets) or a TCP address (tests). */
  listen: { path: string } | { host: string; port: number };
  policy: EgressPolicy;
  /** Non-public ranges that may be reached all the same; everything else must be public. */
  allowAddresses: readonly AddressRange[];
  lookup?: EgressLookup;
  onConnection: (record: EgressRecord) => void;
  connectTimeoutMs?: number;
}

export interface EgressProxy {
  /** The socket path, or `host:port`. */
  readonly address: string;
  close(): Promise<void>;
}

/** Why a connection goes no further: the status the client gets and the one-line reason. */
interface Refusal {
  status: 400 | 403 | 502;
  allowed: boolean;
  reason: string;
}

/**
 * An HTTP proxy for one sandbox: CONNECT tunnels (HTTPS, by name, no TLS interception) and plain
 * `http://` requests in absolute form. Each connection is decided by the policy on its name, then
 * by the addresses the name resolves to, and is made to the address that was checked, never by
 * resolving the name again (a second answer could be a private address: DNS rebinding).
 */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const allowedRanges = blockListOf(options.allowAddresses);
  const lookup = options.lookup ?? (dnsLookup as EgressLookup);
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const open = new Set<Duplex>();
  const track = (socket: Duplex): void => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  };
  const report = (record: EgressRecord): void => {
    try {
      options.onConnection(record);
    } catch {
      // A failing reporter must not take the proxy down.
    }
  };

  /** The policy on the name, then every address it resolves to; the address to connect to. */
  async function check(host: string, port: number): Promise<{ address: string } | Refusal> {
    const decision = await options.policy(host, port);
    if (!decision.allowed) return { status: 403, allowed: false, reason: decision.reason };
    let addresses: string[];
    if (isIP(host) !== 0) addresses = [host];
    else {
      try {
        addresses = await new Promise<string[]>((resolve, reject) =>
          lookup(host, { all: true }, (error, found) =>
            error ? reject(error) : resolve(found.map((a) => a.address)),
          ),
        );
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code ?? 'error';
        return { status: 502, allowed: false, reason: `name resolution failed (${code})` };
      }
    }
    if (addresses.length === 0)
      return { status: 502, allowed: false, reason: 'name resolution failed (no address)' };
    // Every address, not only the one used: a name that also points inside is refused as a whole.
    const inside = addresses.find((address) => !isAddressAllowed(address, allowedRanges));
    if (inside !== undefined)
      return { status: 403, allowed: false, reason: `address ${inside} not allowed (not public)` };
    return { address: addresses[0]! };
  }

  function openUpstream(address: string, port: number): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: address, port, allowHalfOpen: true });
      track(socket);
      const fail = (reason: string): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(new Error(reason));
      };
      const timer = setTimeout(() => fail('upstream connect timed out'), connectTimeoutMs);
      socket.once('error', (error: NodeJS.ErrnoException) =>
        fail(`upstream connect failed (${error.code ?? error.message})`),
      );
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(socket);
      });
    });
  }

  const line = (host: string, port: number, reason: string): string =>
    `paddock egress: ${host}:${port} refused: ${reason}\n`;

  /**
   * The upstream connection for a request, checked and opened; undefined when it was refused or
   * could not be made, which `refuse` has then answered and the record reported.
   */
  async function reach(
    record: Omit<EgressRecord, 'allowed'>,
    refuse: (status: number, body: string) => void,
  ): Promise<Socket | undefined> {
    const { host, port } = record;
    const checked = await check(host, port);
    if ('status' in checked) {
      refuse(checked.status, line(host, port, checked.reason));
      report({ ...record, allowed: checked.allowed, reason: checked.reason });
      return undefined;
    }
    try {
      return await openUpstream(checked.address, port);
    } catch (error) {
      const reason = (error as Error).message;
      refuse(502, line(host, port, reason));
      report({ ...record, allowed: true, reason });
      return undefined;
    }
  }

  async function tunnel(request: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    const target = connectTarget(request.url ?? '');
    if (!target) return rawAnswer(client, 400, `paddock egress: bad CONNECT target ${request.url}\n`);
    const { host, port } = target;
    const record = { host, port, method: 'CONNECT' as const, bytes_out: 0, bytes_in: 0 };
    const upstream = await reach(record, (status, body) => rawAnswer(client, status, body));
    if (!upstream) return;
    upstream.once('close', () =>
      report({ ...record, allowed: true, bytes_out: upstream.bytesWritten, bytes_in: upstream.bytesRead }),
    );
    if (client.destroyed) return void upstream.destroy();
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    pipeSockets(client, upstream);
  }

  async function forward(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = absoluteHttpUrl(request.url ?? '');
    if (!url) return answer(response, 400, 'paddock egress: not a proxy request (CONNECT or http://...)\n');
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const port = url.port === '' ? 80 : Number(url.port);
    const record = { host, port, method: 'HTTP' as const, bytes_out: 0, bytes_in: 0 };
    const upstream = await reach(record, (status, body) => answer(response, status, body));
    if (!upstream) return;
    const outgoing = httpRequest({
      createConnection: () => upstream,
      method: request.method,
      path: `${url.pathname}${url.search}`,
      headers: endToEnd(request.rawHeaders, url.host, request.headers['transfer-encoding'] !== undefined),
    });
    outgoing.on('response', (incoming) => {
      response.writeHead(incoming.statusCode ?? 502, incoming.statusMessage, endToEnd(incoming.rawHeaders));
      incoming.pipe(response);
      incoming.on('error', () => response.destroy());
    });
    outgoing.on('error', () => {
      if (response.headersSent) response.destroy();
      else answer(response, 502, line(host, port, 'upstream failed'));
    });
    response.once('close', () => {
      upstream.destroy();
      report({ ...record, allowed: true, bytes_out: upstream.bytesWritten, bytes_in: upstream.bytesRead });
    });
    request.pipe(outgoing);
  }

  const server = createServer();
  server.on('connection', (socket: Socket) => {
    track(socket);
    socket.on('error', () => socket.destroy());
  });
  server.on('connect', (request: IncomingMessage, client: Socket, head: Buffer) => {
    client.on('error', () => client.destroy());
    tunnel(request, client, head).catch(() => client.destroy());
  });
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    forward(request, response).catch(() => response.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.listen, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = server.address();
  const address =
    typeof bound === 'string' || bound === null
      ? (bound ?? '')
      : `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${(bound as AddressInfo).port}`;

  return {
    address,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of open) socket.destroy();
      await closed;
    },
  };
}

/** `host:port` of a CONNECT request (`[v6]:port` too); undefined when it is not one. */
function connectTarget(target: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:/?#@[\]\s]+):(\d{1,5})$/.exec(target);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65_535) return undefined;
  // Through the URL parser, so a name is compared as the HTTP path compares it (lower case, IDNA).
  const url = URL.parse(`http://${match[1]}/`);
  return url ? { host: url.hostname.replace(/^\[|\]$/g, ''), port } : undefined;
}

function absoluteHttpUrl(target: string): URL | undefined {
  if (!/^http:\/\//i.test(target)) return undefined;
  const url = URL.parse(target);
  return url && url.hostname !== '' ? url : undefined;
}

/** Headers meant for one hop only (RFC 9110 7.6.1); `proxy-*` are the client's words to this proxy. */
const hopByHop = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/**
 * The end-to-end headers of a raw header list. For a request, `Host` is the URL's authority
 * whatever the client sent: a different Host would reach another site behind the same address
 * (domain fronting past the policy). A body of unknown length is sent on chunked again.
 */
function endToEnd(raw: string[], host?: string, chunked = false): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2)
    if (raw[i]!.toLowerCase() === 'connection')
      for (const token of raw[i + 1]!.split(',')) named.add(token.trim().toLowerCase());
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (hopByHop.has(name) || named.has(name) || name.startsWith('proxy-')) continue;
    if (host !== undefined && name === 'host') continue;
    kept.push(raw[i]!, raw[i + 1]!);
  }
  if (host !== undefined) kept.unshift('Host', host);
  if (chunked) kept.push('Transfer-Encoding', 'chunked');
  return kept;
}

function answer(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, { 'content-type': 'text/plain', connection: 'close' });
  response.end(body);
}

/** A response on a CONNECT socket, which the HTTP server has handed over: written by hand. */
function rawAnswer(client: Socket, status: number, body: string): void {
  client.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: text/plain\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  client.resume(); // drain what the client still sends, so the socket closes when it does
}
