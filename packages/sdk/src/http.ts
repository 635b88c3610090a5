import { errorFromResponse, networkError, PaddockError } from './errors.ts';
import { defaultRetryOptions, type RetryOptions, retryDelayMs, sleep } from './retry.ts';

export interface ClientOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8787` (without `/v2`). */
  baseUrl: string;
  /** The bearer token sent on every request. */
  token: string;
  /** The `fetch` to use (default: the global one). */
  fetch?: typeof fetch;
  /** The retry budget (see `retry.ts`); `{ attempts: 1 }` turns retries off. */
  retry?: Partial<RetryOptions>;
}

/** Options every method takes. */
export interface CallOptions {
  /** Aborts the request, and any wait between retries (rejects with the signal's reason). */
  signal?: AbortSignal;
}

export type Query = Record<string, string | number | boolean | undefined>;

/** A route with its ids encoded: path`/v2/threads/${id}`. */
export const path = (strings: TemplateStringsArray, ...ids: string[]) =>
  strings.reduce((out, s, i) => out + s + (i < ids.length ? encodeURIComponent(ids[i]!) : ''), '');

export interface SendOptions<T> extends CallOptions {
  query?: Query;
  body?: unknown;
  /** Sending it twice does what sending it once does (see `retry.ts`). */
  replaySafe: boolean;
  headers?: Record<string, string>;
  /** Reads a successful answer; a failure here (a cut body) counts as no answer. */
  read: (response: Response) => Promise<T>;
}

/** The HTTP side of the client: URLs, the bearer token, error mapping and the retry loop. */
export class Transport {
  readonly baseUrl: string;
  readonly token: string;
  readonly fetch: typeof fetch;
  readonly retry: RetryOptions;

  constructor(options: ClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.token = options.token;
    this.fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.retry = { ...defaultRetryOptions, ...options.retry };
  }

  url(path: string, query: Query = {}): string {
    const url = new URL(`${this.baseUrl}${path}`);
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(key, String(value));
    }
    return url.toString();
  }

  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...extra };
  }

  /** Sends the request, retried by the rules of `retry.ts`, and answers what `read` makes of the answer. */
  async send<T>(method: string, path: string, options: SendOptions<T>): Promise<T> {
    const { signal } = options;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers = this.headers({
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    });
    for (let attempt = 1; ; attempt++) {
      let error: PaddockError;
      try {
        const response = await this.fetch(this.url(path, options.query), { method, headers, body, signal });
        if (response.ok) return await options.read(response);
        error = await errorFromResponse(response);
      } catch (cause) {
        if (signal?.aborted) throw signal.reason;
        if (cause instanceof PaddockError) throw cause;
        error = networkError(cause);
      }
      const wait = retryDelayMs(error, attempt, options.replaySafe, this.retry);
      if (wait === undefined) throw error;
      await sleep(wait, signal);
    }
  }

  json<T>(method: string, path: string, options: Omit<SendOptions<T>, 'read'>): Promise<T> {
    return this.send(method, path, { ...options, read: (response) => response.json() as Promise<T> });
  }
}
