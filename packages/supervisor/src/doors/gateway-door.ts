import { createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pipeline } from 'node:stream';

/** The thread a door opens onto: the API as the sandbox reaches it and the thread's token. */
export interface DoorThread {
  apiUrl: string;
  token: string;
}

export interface GatewayDoor {
  /** The door's own base URL (`http://127.0.0.1:<port>`), in place of the API's. */
  readonly url: string;
  /** From now on every request goes to this thread's API with its token. */
  open(thread: DoorThread): void;
  close(): void;
}

/** The headers a program may carry its (placeholder) key in; the door sends the thread's as a bearer. */
const keyHeaders = ['authorization', 'x-api-key', 'x-goog-api-key'];

/**
 * The way to the model gateway for a program started before its thread was known (a standby
 * sandbox's, D9): a loopback HTTP server in the sandbox that forwards each request to the Paddock
 * API with the thread's token in place of the program's placeholder. A request made before the
 * thread is known (a warm-up prompt's, see `warm_prompt`) is answered at once with a 400, which no
 * client retries. The program never holds the token itself, so it can start first.
 */
export async function openGatewayDoor(): Promise<GatewayDoor> {
  let thread: DoorThread | undefined;
  const server = createServer((incoming, answer) => {
    if (thread) forward(incoming, answer, thread);
    else refuse(incoming, answer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  // The program's idle keep-alive connections must not keep the supervisor alive.
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    open: (target) => {
      thread = target;
    },
    close() {
      if (!server.listening) return;
      server.closeAllConnections();
      server.close();
    },
  };
}

function refuse(incoming: IncomingMessage, answer: ServerResponse): void {
  incoming.resume();
  const message = 'this sandbox serves no thread yet';
  answer
    .writeHead(400, { 'content-type': 'application/json' })
    .end(JSON.stringify({ error: { message, type: 'invalid_request_error', code: 'no_thread' } }));
}

function forward(incoming: IncomingMessage, answer: ServerResponse, target: DoorThread) {
  const api = new URL(target.apiUrl);
  const headers: Record<string, string | string[] | undefined> = { ...incoming.headers, host: api.host };
  for (const name of keyHeaders) delete headers[name];
  headers.authorization = `Bearer ${target.token}`;
  const upstream = request(
    {
      host: api.hostname,
      port: api.port,
      method: incoming.method,
      path: `${api.pathname.replace(/\/$/, '')}${incoming.url}`,
      headers,
    },
    (response) => {
      answer.writeHead(response.statusCode ?? 502, response.headers);
      pipeline(response, answer, () => {});
    },
  );
  upstream.on('error', () => answer.destroy());
  // The program gave the call up (a Stop): the call to the gateway ends too.
  answer.on('close', () => upstream.destroy());
  pipeline(incoming, upstream, () => {});
}
