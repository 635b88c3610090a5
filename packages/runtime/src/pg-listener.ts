/** The subset of `pg.Client` a LISTEN connection uses. */
export interface ListenClient {
  connect(): Promise<unknown>;
  query(text: string): Promise<unknown>;
  end(): Promise<unknown>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}

export interface PgListenerOptions {
  /** A new, unconnected client; called again after each drop. */
  listenClient(): ListenClient;
  /** The channels listened on (fixed names, not user input: they are written into `LISTEN`). */
  channels: readonly string[];
  log?: { warn(obj: object, msg: string): void };
  /** First wait before reconnecting; doubles up to `maxRetryMs`. */
  retryMs?: number;
  maxRetryMs?: number;
}

export interface ChannelHandler {
  /** A notification's payload (this node's own included). */
  message(payload: string): void;
  /**
   * Listening (after the first connect, and again after each drop): whatever was sent before was
   * missed, so a reader catches up from where it keeps things (the event log).
   */
  resumed?(): void;
}

/**
 * One node's LISTEN connection on PostgreSQL, shared by whatever needs to hear other nodes (the
 * event bus, the node signals): a connection of its own, not the pool's, reconnected with backoff
 * whenever it drops.
 */
export interface PgListener {
  on(channel: string, handler: ChannelHandler): () => void;
  /** Unlistens and ends the connection. */
  close(): Promise<void>;
}

const channelName = /^[a-z_][a-z0-9_]*$/;

export function createPgListener(options: PgListenerOptions): PgListener {
  for (const channel of options.channels)
    if (!channelName.test(channel)) throw new Error(`not a channel name: ${channel}`);
  const retryMs = options.retryMs ?? 100;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  const handlers = new Map<string, Set<ChannelHandler>>(options.channels.map((c) => [c, new Set()]));
  let client: ListenClient | undefined;
  let failures = 0;
  let connecting: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const relisten = (error: unknown) => {
    options.log?.warn({ err: error }, 'the LISTEN connection dropped; reconnecting');
    timer = setTimeout(
      () => {
        timer = undefined;
        if (!closed) connecting = listen();
      },
      Math.min(maxRetryMs, retryMs * 2 ** failures++),
    );
    timer.unref();
  };

  async function listen(): Promise<void> {
    let next: ListenClient;
    try {
      next = options.listenClient();
    } catch (error) {
      return relisten(error);
    }
    client = next;
    let dropped = false;
    const drop = (error?: Error) => {
      if (dropped) return;
      dropped = true;
      void next.end().catch(() => undefined);
      if (closed || client !== next) return;
      client = undefined;
      relisten(error);
    };
    next.on('error', drop);
    next.on('end', () => drop());
    next.on('notification', ({ channel, payload }) => {
      if (payload === undefined) return;
      for (const handler of handlers.get(channel) ?? []) {
        try {
          handler.message(payload);
        } catch (error) {
          // One handler's fault is its own: the others and the connection go on.
          options.log?.warn({ err: error, channel }, 'handling a notification failed');
        }
      }
    });
    try {
      await next.connect();
      for (const channel of options.channels) await next.query(`LISTEN ${channel}`);
    } catch (error) {
      drop(error as Error);
      return;
    }
    if (dropped || closed) return;
    failures = 0;
    for (const set of handlers.values()) for (const handler of set) handler.resumed?.();
  }
  connecting = listen();

  return {
    on(channel, handler) {
      const set = handlers.get(channel);
      if (!set) throw new Error(`not listening on ${channel}`);
      set.add(handler);
      return () => set.delete(handler);
    },
    async close() {
      if (closed) return;
      closed = true;
      if (timer) clearTimeout(timer);
      await connecting;
      const last = client;
      client = undefined;
      if (last) {
        await last.query('UNLISTEN *').catch(() => undefined);
        await last.end().catch(() => undefined);
      }
    },
  };
}
