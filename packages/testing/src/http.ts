import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export type ApiRequest = (
  method: string,
  path: string,
  options?: { body?: unknown; token?: string | null; headers?: Record<string, string> },
) => Promise<Response>;

/** `fetch` against a Paddock server, with `token` unless another (or `null`: none) is given. */
export function apiRequester(baseUrl: () => string, token: string): ApiRequest {
  return (method, path, options = {}) =>
    fetch(`${baseUrl()}${path}`, { method, ...requestParts(token, options) });
}

/** What `app.inject` needs of a Fastify app: a request in, its answer back without a socket. */
export type Inject = (request: {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}) => Promise<{ statusCode: number; headers: Record<string, unknown>; rawPayload: Buffer }>;

/**
 * The same requests as `apiRequester`, handed to the app in process (Fastify's `inject`): no
 * socket, no HTTP client, the same `Response` back.
 */
export function injectRequester(inject: Inject, token: string): ApiRequest {
  return async (method, path, options = {}) => {
    const { headers, body } = requestParts(token, options);
    const answer = await inject({ method, url: path, headers, body });
    const answered = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of [value].flat()) if (one !== undefined) answered.append(name, String(one));
    }
    // A 204 or 304 has no body, and `Response` refuses to be given one, even empty.
    const bodyless = [101, 204, 205, 304].includes(answer.statusCode);
    return new Response(bodyless ? null : new Uint8Array(answer.rawPayload), {
      status: answer.statusCode,
      headers: answered,
    });
  };
}

function requestParts(
  token: string,
  options: Parameters<ApiRequest>[2] = {},
): { headers: Record<string, string>; body?: string } {
  const headers: Record<string, string> = { ...options.headers };
  const bearer = options.token === undefined ? token : options.token;
  if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  return { headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) };
}

/**
 * A loopback port nothing listens on right now, for a server process started next. Chosen below
 * the kernel's ephemeral range: a port from that range can be taken by any outbound connection of
 * the tests running beside it before the server binds it.
 */
export async function freePort(): Promise<number> {
  const [ephemeralStart = 32768] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
    .trim()
    .split(/\s+/)
    .map(Number);
  const low = 10_000;
  const high = Math.max(low + 1000, ephemeralStart);
  for (;;) {
    const port = low + Math.floor(Math.random() * (high - low));
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
}

/** Waits until a server process answers `/healthz`; throws with its output if it exits or takes too long. */
export async function waitUntilHealthy(
  url: string,
  child: ChildProcess,
  output: () => string,
): Promise<void> {
  const until = Date.now() + 20_000;
  for (;;) {
    const up = await fetch(`${url}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    if (Date.now() > until || child.exitCode !== null) throw new Error(`server did not start:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
