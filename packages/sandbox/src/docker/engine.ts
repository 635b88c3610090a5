import { type ClientRequest, request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import type { Readable } from 'node:stream';

/** Where the Engine API listens, from `DOCKER_HOST`: a unix socket (the default) or plain TCP. */
export type EngineAddress = { socketPath: string } | { host: string; port: number };

export const defaultDockerHost = 'unix:///var/run/docker.sock';

/**
 * Reads `DOCKER_HOST` as the Docker CLI does for the two forms Paddock supports. The engine must run
 * on the runner's host (workspaces and code are bind-mounted from it), so `ssh://` and TLS are not.
 */
export function parseDockerHost(value: string): EngineAddress {
  if (value.startsWith('unix://')) {
    const socketPath = value.slice('unix://'.length);
    if (!socketPath.startsWith('/'))
      throw new Error(`DOCKER_HOST ${value}: the socket path must be absolute`);
    return { socketPath };
  }
  if (value.startsWith('tcp://')) {
    const url = new URL(value.replace(/^tcp:/, 'http:'));
    return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 2375) };
  }
  throw new Error(`DOCKER_HOST ${value}: only unix:// and tcp:// engines are supported`);
}

/** An answer of the Engine API, read whole. */
export interface EngineResponse {
  status: number;
  body: Buffer;
}

export class EngineError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

/** The subset of a container's inspect answer Paddock reads. */
export interface ContainerState {
  Running: boolean;
  ExitCode: number;
  OOMKilled: boolean;
}

/**
 * A client of the few Engine API calls the Docker provider makes, over node:http (see
 * docs/decisions.md for why not dockerode). Paths carry no API version: the engine answers in its own
 * current one, and the fields used here have not changed since API 1.25.
 */
export class DockerEngine {
  readonly address: EngineAddress;
  /** The `DOCKER_HOST` value, for messages. */
  readonly name: string;

  constructor(dockerHost: string) {
    this.address = parseDockerHost(dockerHost);
    this.name = dockerHost;
  }

  /** Resolves when the engine answers `/_ping` within the time, else rejects with why not. */
  async ping(timeoutMs = 2_000): Promise<void> {
    const { status, body } = await this.call('GET', '/_ping', { timeoutMs });
    if (status !== 200) throw new EngineError(status, `/_ping answered ${status}: ${body.toString()}`);
  }

  async imageExists(image: string): Promise<boolean> {
    const { status, body } = await this.call('GET', `/images/${encodeURIComponent(image)}/json`);
    if (status === 404) return false;
    if (status !== 200) throw engineError(status, body);
    return true;
  }

  /** `docker import`: makes `image` (repo:tag) from a root filesystem tarball, no registry involved. */
  async importImage(image: string, tarball: Readable, change: string[] = []): Promise<void> {
    const [repo, tag = 'latest'] = splitImage(image);
    const query = new URLSearchParams({ fromSrc: '-', repo, tag });
    for (const line of change) query.append('changes', line);
    const { status, body } = await this.call('POST', `/images/create?${query}`, {
      body: tarball,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    if (status !== 200) throw engineError(status, body);
    // The answer is a stream of JSON progress objects; a failed import says so in one of them.
    for (const line of body.toString().split('\n')) {
      if (!line.trim()) continue;
      const message = JSON.parse(line) as { error?: string };
      if (message.error) throw new EngineError(500, `image import failed: ${message.error}`);
    }
  }

  async createContainer(name: string, config: object): Promise<string> {
    const { status, body } = await this.call('POST', `/containers/create?name=${encodeURIComponent(name)}`, {
      json: config,
    });
    if (status !== 201) throw engineError(status, body);
    return (JSON.parse(body.toString()) as { Id: string }).Id;
  }

  /**
   * Attaches to the container's stdin, stdout and stderr before it starts (nothing it writes is
   * missed). Answers the hijacked connection: raw bytes in, the engine's multiplexed frames out.
   */
  attach(id: string): Promise<Socket> {
    const query = 'stream=1&stdin=1&stdout=1&stderr=1';
    return new Promise((resolve, reject) => {
      const req = this.#request('POST', `/containers/${id}/attach?${query}`, {
        Connection: 'Upgrade',
        Upgrade: 'tcp',
      });
      req.on('upgrade', (_response: IncomingMessage, socket: Socket, head: Buffer) => {
        if (head.length > 0) socket.unshift(head);
        resolve(socket);
      });
      req.on('response', (response: IncomingMessage) => {
        readAll(response).then(
          (body) => reject(engineError(response.statusCode ?? 0, body)),
          (error: unknown) => reject(error),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  async start(id: string): Promise<void> {
    const { status, body } = await this.call('POST', `/containers/${id}/start`);
    if (status !== 204 && status !== 304) throw engineError(status, body);
  }

  async inspect(id: string): Promise<ContainerState | undefined> {
    const { status, body } = await this.call('GET', `/containers/${id}/json`);
    if (status === 404) return undefined;
    if (status !== 200) throw engineError(status, body);
    return (JSON.parse(body.toString()) as { State: ContainerState }).State;
  }

  /** Kills (if running) and removes the container with its anonymous volumes; gone already is fine. */
  async remove(id: string): Promise<void> {
    const { status, body } = await this.call('DELETE', `/containers/${id}?force=1&v=1`);
    // 409: a removal of the same container is under way already.
    if (status !== 204 && status !== 404 && status !== 409) throw engineError(status, body);
  }

  /** Ids of the containers, running or not, that carry this label (`name=value`). */
  async containersLabelled(label: string): Promise<string[]> {
    const filters = encodeURIComponent(JSON.stringify({ label: [label] }));
    const { status, body } = await this.call('GET', `/containers/json?all=1&filters=${filters}`);
    if (status !== 200) throw engineError(status, body);
    return (JSON.parse(body.toString()) as { Id: string }[]).map((c) => c.Id);
  }

  /** One request, its answer read whole. */
  call(
    method: string,
    path: string,
    options: { json?: object; body?: Readable; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<EngineResponse> {
    return new Promise((resolve, reject) => {
      const headers = { ...options.headers };
      if (options.json) headers['Content-Type'] = 'application/json';
      const req = this.#request(method, path, headers);
      if (options.timeoutMs !== undefined) {
        req.setTimeout(options.timeoutMs, () =>
          req.destroy(new Error(`no answer from the Docker engine in ${options.timeoutMs} ms`)),
        );
      }
      req.on('error', reject);
      req.on('response', (response) => {
        readAll(response).then((body) => resolve({ status: response.statusCode ?? 0, body }), reject);
      });
      if (options.body) {
        options.body.on('error', (error) => req.destroy(error));
        options.body.pipe(req);
      } else req.end(options.json ? JSON.stringify(options.json) : undefined);
    });
  }

  #request(method: string, path: string, headers: Record<string, string>): ClientRequest {
    // No keep-alive pool: attach hijacks its connection, and every other call is short.
    const where =
      'socketPath' in this.address
        ? { socketPath: this.address.socketPath }
        : { host: this.address.host, port: this.address.port };
    return httpRequest({ ...where, method, path, headers: { Host: 'docker', ...headers }, agent: false });
  }
}

function readAll(stream: Readable): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => resolve(Buffer.concat(chunks)));
    stream.on('error', reject);
  });
}

/** The engine's error bodies are `{"message": …}`. */
function engineError(status: number, body: Buffer): EngineError {
  let message = body.toString().trim();
  try {
    message = (JSON.parse(message) as { message?: string }).message ?? message;
  } catch {}
  return new EngineError(status, `Docker engine answered ${status}: ${message}`);
}

/** `repo:tag`, where the repo may hold a registry port (`host:5000/name`). */
function splitImage(image: string): [string, string | undefined] {
  const colon = image.lastIndexOf(':');
  if (colon === -1 || image.slice(colon).includes('/')) return [image, undefined];
  return [image.slice(0, colon), image.slice(colon + 1)];
}
