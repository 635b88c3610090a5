import type { McpTool, McpToolbox, McpToolResult, SandboxHands } from '@paddock/harness';
import type { McpStatusData, TurnMcpServer } from '@paddock/protocol';
import type { McpConnection, McpConnectionOptions } from './mcp-connection.ts';

/** What the servers run with: the sandbox, its environment and workspace, and the thread's relay. */
export interface McpServerContext {
  sandbox: SandboxHands;
  env: Record<string, string>;
  workspaceDir: string;
  relay: McpConnectionOptions['relay'];
}

interface Entry {
  server: TurnMcpServer;
  /** The server's config as JSON: a turn that brings another config for its name restarts it. */
  key: string;
  state: McpStatusData;
  connection?: McpConnection;
  connecting?: Promise<void>;
}

/**
 * The agent's MCP servers, held by the runner for the life of the sandbox: each is started (or
 * connected) once, the first turn that names it, and again on the next use or turn after it died.
 * Every change of a server's state is reported to the running turn (`mcp.status`), and each turn
 * starts with one report per server. The MCP SDK is loaded only when a turn names a server.
 */
export class McpServers implements McpToolbox {
  readonly #entries = new Map<string, Entry>();
  #context: McpServerContext | undefined;
  #report: ((status: McpStatusData) => void) | undefined;

  /**
   * A turn begins with these servers: servers it no longer names are closed, the others connected
   * unless they are, and each one's state reported. Answers once every server is connected or failed.
   */
  async prepare(
    servers: TurnMcpServer[],
    context: McpServerContext,
    report: (status: McpStatusData) => void,
  ): Promise<void> {
    this.#context = context;
    const wanted = new Map(servers.map((server) => [server.name, server]));
    for (const [name, entry] of this.#entries) {
      const server = wanted.get(name);
      if (server && JSON.stringify(server) === entry.key) continue;
      this.#entries.delete(name);
      void this.#disconnect(entry);
    }
    const entries = [...wanted.values()].map((server) => this.#entryOf(server));
    // Which servers still run is asked of the sandbox first: a server found dead meanwhile is not
    // reported as failed, only started again.
    const alive = await Promise.all(entries.map(async (entry) => (await entry.connection?.alive()) === true));
    this.#report = report;
    await Promise.all(
      entries.map((entry, i) => {
        if (alive[i] && entry.connection) {
          report(entry.state);
          return undefined;
        }
        return this.#restart(entry);
      }),
    );
  }

  #entryOf(server: TurnMcpServer): Entry {
    let entry = this.#entries.get(server.name);
    if (!entry) {
      const state: McpStatusData = {
        name: server.name,
        transport: server.transport,
        status: 'connecting',
        tool_count: 0,
        error: null,
      };
      entry = { server, key: JSON.stringify(server), state };
      this.#entries.set(server.name, entry);
    }
    return entry;
  }

  /** The turn is over: changes until the next one are reported when it starts. */
  detach(): void {
    this.#report = undefined;
  }

  tools(): McpTool[] {
    return [...this.#entries.values()].flatMap((entry) => entry.connection?.tools ?? []);
  }

  async call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<McpToolResult> {
    const entry = this.#entries.get(server);
    if (!entry) throw new Error(`no MCP server named ${server}`);
    if (!(await entry.connection?.alive())) await this.#restart(entry);
    if (!entry.connection) throw new Error(`MCP server ${server} is not connected: ${entry.state.error}`);
    return entry.connection.call(tool, args, signal);
  }

  /** The sandbox stops: every server is closed (a `stdio` server's process ends). */
  async close(): Promise<void> {
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(entries.map((entry) => this.#disconnect(entry)));
  }

  /** Connects a server that is not connected, after closing what is left of a dead connection. */
  async #restart(entry: Entry): Promise<void> {
    if (entry.connection) await this.#disconnect(entry);
    await this.#connect(entry);
  }

  #connect(entry: Entry): Promise<void> {
    entry.connecting ??= (async () => {
      const context = this.#context;
      if (!context) return;
      this.#set(entry, { status: 'connecting', tool_count: 0, error: null });
      try {
        const { openMcpConnection } = await import('./mcp-connection.ts');
        let connection: McpConnection | undefined;
        const options: McpConnectionOptions = {
          ...context,
          server: entry.server,
          onLost: () => {
            if (!connection || entry.connection !== connection) return;
            entry.connection = undefined;
            this.#set(entry, { status: 'failed', tool_count: 0, error: 'the server exited' });
          },
        };
        connection = await openMcpConnection(options);
        if (this.#entries.get(entry.server.name) !== entry) {
          // Dropped while it connected (a later turn named another config, or the sandbox stops).
          await connection.close();
          return;
        }
        entry.connection = connection;
        this.#set(entry, { status: 'connected', tool_count: connection.tools.length, error: null });
      } catch (error) {
        const { McpNeedsAuthError } = await import('./mcp-connection.ts');
        const message = error instanceof Error ? error.message : String(error);
        this.#set(entry, {
          status: error instanceof McpNeedsAuthError ? 'needs_auth' : 'failed',
          tool_count: 0,
          error: message,
        });
      }
    })().finally(() => {
      entry.connecting = undefined;
    });
    return entry.connecting;
  }

  async #disconnect(entry: Entry): Promise<void> {
    await entry.connecting?.catch(() => {});
    const connection = entry.connection;
    entry.connection = undefined;
    if (!connection) return;
    await connection.close();
  }

  #set(entry: Entry, state: Pick<McpStatusData, 'status' | 'tool_count' | 'error'>): void {
    entry.state = { ...entry.state, ...state };
    this.#report?.(entry.state);
  }
}
