import { execFile } from 'node:child_process';
import type { LookupAddress } from 'node:dns';
import { EventEmitter, once } from 'node:events';
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { type AddressInfo, connect, createServer, type Server as NetServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAddressRanges } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type EgressLookup,
  type EgressProxy,
  type EgressRecord,
  startEgressProxy,
} from '../src/egress/egress-proxy.ts';
import { makeTempRoot } from './temp-root.ts';

const run = promisify(execFile);

/** The names the tests use, resolved without DNS. */
const names: Record<string, string[]> = {
  'allowed.test': ['127.0.0.1'],
  'inside.test': ['127.0.0.1'],
  // A public address and a private one: the proxy must not pick the public one and go on.
  'mixed.test': ['198.51.99.1', '10.1.2.3'],
};
let lookups = 0;
const lookup: EgressLookup = (hostname, _options, callback) => {
  lookups += 1;
  const addresses = names[hostname];
  if (addresses === undefined)
    return callback(Object.assign(new Error(`${hostname} not found`), { code: 'ENOTFOUND' }), []);
  callback(
    null,
    addresses.map((address) => ({ address, family: 4 }) satisfies LookupAddress),
  );
};
/** The policy allows these names (IP literals too, so the address check is what refuses them). */
const policyNames = new Set([
  'allowed.test',
  'inside.test',
  'mixed.test',
  'nowhere.test',
  '127.0.0.1',
  '169.254.169.254',
]);
const policy = (host: string) =>
  policyNames.has(host)
    ? ({ allowed: true } as const)
    : ({ allowed: false, reason: "not in the agent's network policy" } as const);

let upstream: Server;
let upstreamPort: number;
let upstreamHeaders: IncomingHttpHeaders | undefined;
let echo: NetServer;
let echoPort: number;
let closedPort: number;
const temp = await makeTempRoot('egress-proxy');

beforeAll(async () => {
  upstream = createHttpServer(async (request, response) => {
    upstreamHeaders = request.headers;
    let body = '';
    for await (const chunk of request) body += chunk;
    response.end(`upstream saw ${request.method} ${request.url}${body ? ` body=${body}` : ''}`);
  });
  upstream.listen(0, '127.0.0.1');
  await once(upstream, 'listening');
  upstreamPort = (upstream.address() as AddressInfo).port;
  echo = createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  echo.listen(0, '127.0.0.1');
  await once(echo, 'listening');
  echoPort = (echo.address() as AddressInfo).port;
  // A port nothing listens on: bound, then closed.
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  upstream.closeAllConnections();
  await new Promise((resolve) => upstream.close(resolve));
  await new Promise((resolve) => echo.close(resolve));
  await temp.remove();
});

async function startProxy(
  allow: string,
  listen: { path: string } | { host: string; port: number } = { host: '127.0.0.1', port: 0 },
): Promise<{ proxy: EgressProxy; records: EgressRecord[] }> {
  const records: EgressRecord[] = [];
  const proxy = await startEgressProxy({
    listen,
    policy,
    allowAddresses: parseAddressRanges(allow),
    lookup,
    onConnection: (record) => records.push(record),
    connectTimeoutMs: 2_000,
  });
  return { proxy, records };
}

/** A socket to the proxy that has sent `CONNECT target`, and what it has received so far. */
function connectThrough(proxyAddress: string, target: string) {
  const socket = proxyAddress.startsWith('/')
    ? connect(proxyAddress)
    : connect(Number(proxyAddress.split(':')[1]), '127.0.0.1');
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
  let received = '';
  const progress = new EventEmitter();
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
    progress.emit('data');
  });
  socket.on('error', () => {});
  const closed = once(socket, 'close').then(() => received);
  return {
    socket,
    /** Everything received once the proxy closed the connection. */
    closed,
    /** What was received once `predicate` holds of it. */
    until(predicate: (text: string) => boolean): Promise<string> {
      return new Promise((resolve, reject) => {
        const look = () => {
          if (!predicate(received)) return;
          progress.off('data', look);
          resolve(received);
        };
        progress.on('data', look);
        socket.once('close', () => reject(new Error(`closed after ${JSON.stringify(received)}`)));
        look();
      });
    },
  };
}

const curl = (proxyAddress: string, url: string, ...extra: string[]) =>
  run('curl', ['-sS', '--max-time', '10', '--proxy', `http://${proxyAddress}`, ...extra, url], {
    env: { PATH: process.env.PATH },
  });

describe('egress proxy', () => {
  it('forwards a plain http:// request to an allowed name, with Host kept and no proxy headers', async () => {
    const { proxy, records } = await startProxy('127.0.0.1');
    try {
      const before = lookups;
      const { stdout } = await curl(proxy.address, `http://allowed.test:${upstreamPort}/x?y=1`);
      // allowed.test is in no real DNS: the upstream was reached by the address checked, resolved once.
      expect(lookups - before).toBe(1);
      expect(stdout).toBe('upstream saw GET /x?y=1');
      expect(upstreamHeaders?.host).toBe(`allowed.test:${upstreamPort}`);
      expect(Object.keys(upstreamHeaders ?? {}).filter((name) => name.startsWith('proxy-'))).toEqual([]);
      await vi.waitFor(() => expect(records).toHaveLength(1));
      expect(records[0]).toMatchObject({
        host: 'allowed.test',
        port: upstreamPort,
        method: 'HTTP',
        allowed: true,
      });
      expect(records[0]!.reason).toBeUndefined();
      expect(records[0]!.bytes_out).toBeGreaterThan(0);
      expect(records[0]!.bytes_in).toBeGreaterThan('upstream saw GET /x?y=1'.length);
    } finally {
      await proxy.close();
    }
  });

  it('forwards a request body, of known length and chunked', async () => {
    const { proxy } = await startProxy('127.0.0.1');
    try {
      const url = `http://allowed.test:${upstreamPort}/post`;
      expect((await curl(proxy.address, url, '--data', 'hello')).stdout).toBe(
        'upstream saw POST /post body=hello',
      );
      const chunked = await curl(
        proxy.address,
        url,
        '-H',
        'Transfer-Encoding: chunked',
        '--data',
        'in chunks',
      );
      expect(chunked.stdout).toBe('upstream saw POST /post body=in chunks');
      expect(upstreamHeaders?.['transfer-encoding']).toBe('chunked');
    } finally {
      await proxy.close();
    }
  });

  it('tunnels a CONNECT to an allowed name both ways and reports the bytes', async () => {
    const { proxy, records } = await startProxy('127.0.0.1');
    try {
      const client = connectThrough(proxy.address, `allowed.test:${echoPort}`);
      const head = await client.until((text) => text.includes('\r\n\r\n'));
      expect(head).toBe('HTTP/1.1 200 Connection Established\r\n\r\n');
      client.socket.write('ping-12345');
      await client.until((text) => text.endsWith('ping-12345'));
      client.socket.write('pong');
      await client.until((text) => text.endsWith('ping-12345pong'));
      client.socket.end();
      await client.closed;
      await vi.waitFor(() => expect(records).toHaveLength(1));
      expect(records[0]).toEqual({
        host: 'allowed.test',
        port: echoPort,
        method: 'CONNECT',
        allowed: true,
        bytes_out: 14,
        bytes_in: 14,
      });
    } finally {
      await proxy.close();
    }
  });

  it('refuses a name the policy refuses with 403 and a one-line reason', async () => {
    const { proxy, records } = await startProxy('127.0.0.1');
    try {
      const client = connectThrough(proxy.address, 'refused.test:443');
      const answer = await client.closed;
      const reason = "paddock egress: refused.test:443 refused: not in the agent's network policy\n";
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
      expect(answer).toMatch(/\r\ncontent-type: text\/plain\r\n/);
      expect(answer.split('\r\n\r\n')[1]).toBe(reason);

      const { stdout } = await curl(proxy.address, `http://refused.test:${upstreamPort}/`);
      expect(stdout).toBe(
        `paddock egress: refused.test:${upstreamPort} refused: not in the agent's network policy\n`,
      );
      await vi.waitFor(() => expect(records).toHaveLength(2));
      expect(records).toEqual([
        {
          host: 'refused.test',
          port: 443,
          method: 'CONNECT',
          allowed: false,
          reason: "not in the agent's network policy",
          bytes_out: 0,
          bytes_in: 0,
        },
        {
          host: 'refused.test',
          port: upstreamPort,
          method: 'HTTP',
          allowed: false,
          reason: "not in the agent's network policy",
          bytes_out: 0,
          bytes_in: 0,
        },
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('refuses non-public addresses unless allowed: a name resolving to loopback, and IP literals', async () => {
    const { proxy, records } = await startProxy('');
    try {
      for (const [target, address] of [
        [`inside.test:${echoPort}`, '127.0.0.1'],
        [`127.0.0.1:${echoPort}`, '127.0.0.1'],
        ['169.254.169.254:80', '169.254.169.254'],
        ['mixed.test:443', '10.1.2.3'],
      ] as const) {
        const answer = await connectThrough(proxy.address, target).closed;
        expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 403 Forbidden');
        expect(answer.split('\r\n\r\n')[1]).toBe(
          `paddock egress: ${target} refused: address ${address} not allowed (not public)\n`,
        );
      }
      const { stdout } = await curl(proxy.address, 'http://169.254.169.254/latest/meta-data/');
      expect(stdout).toBe(
        'paddock egress: 169.254.169.254:80 refused: address 169.254.169.254 not allowed (not public)\n',
      );
      await vi.waitFor(() => expect(records).toHaveLength(5));
      expect(records.map((r) => [r.host, r.allowed, r.bytes_out])).toEqual([
        ['inside.test', false, 0],
        ['127.0.0.1', false, 0],
        ['169.254.169.254', false, 0],
        ['mixed.test', false, 0],
        ['169.254.169.254', false, 0],
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('answers 502 when the name does not resolve or the upstream refuses, and 400 to a non-proxy request', async () => {
    const { proxy, records } = await startProxy('127.0.0.1');
    try {
      const unresolved = await connectThrough(proxy.address, 'nowhere.test:443').closed;
      expect(unresolved.split('\r\n')[0]).toBe('HTTP/1.1 502 Bad Gateway');
      expect(unresolved.split('\r\n\r\n')[1]).toBe(
        'paddock egress: nowhere.test:443 refused: name resolution failed (ENOTFOUND)\n',
      );
      const down = await connectThrough(proxy.address, `allowed.test:${closedPort}`).closed;
      expect(down.split('\r\n')[0]).toBe('HTTP/1.1 502 Bad Gateway');
      expect(down.split('\r\n\r\n')[1]).toBe(
        `paddock egress: allowed.test:${closedPort} refused: upstream connect failed (ECONNREFUSED)\n`,
      );
      const response = await fetch(`http://${proxy.address}/not-a-proxy-request`);
      expect(response.status).toBe(400);
      await vi.waitFor(() => expect(records).toHaveLength(2));
      expect(records).toEqual([
        {
          host: 'nowhere.test',
          port: 443,
          method: 'CONNECT',
          allowed: false,
          reason: 'name resolution failed (ENOTFOUND)',
          bytes_out: 0,
          bytes_in: 0,
        },
        {
          host: 'allowed.test',
          port: closedPort,
          method: 'CONNECT',
          allowed: true,
          reason: 'upstream connect failed (ECONNREFUSED)',
          bytes_out: 0,
          bytes_in: 0,
        },
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('listens on a unix socket, and close() ends the tunnels still open', async () => {
    const path = join(temp.path, 'egress.sock');
    const { proxy, records } = await startProxy('127.0.0.1', { path });
    expect(proxy.address).toBe(path);
    const client = connectThrough(path, `allowed.test:${echoPort}`);
    await client.until((text) => text.includes('\r\n\r\n'));
    client.socket.write('over unix');
    await client.until((text) => text.endsWith('over unix'));
    await proxy.close();
    await client.closed;
    await vi.waitFor(() => expect(records).toHaveLength(1));
    expect(records[0]).toMatchObject({
      host: 'allowed.test',
      method: 'CONNECT',
      allowed: true,
      bytes_out: 9,
      bytes_in: 9,
    });
  });
});
