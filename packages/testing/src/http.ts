import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export type ApiRequest = (
  method: string,
  path: string,
  options?: { body?: unknown; token?: string | null; headers?: Record<string, string> },
) => Promise<Response>;

/** `fetch` against a Paddock server, with `token` unless another (or `null`: none) is given. */
export function apiRequester(baseUrl: () => string, token: string): ApiRequest {
  return (method, path, options = {}) => {
    const headers: Record<string, string> = { ...options.headers };
    const bearer = options.token === undefined ? token : options.token;
    if (bearer !== null) headers.authorization = `Bearer ${bearer}`;
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    return fetch(`${baseUrl()}${path}`, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  };
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
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
