import { finished } from 'node:stream/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpTool, McpToolResult, SandboxHands, SandboxProgram } from '@paddock/harness';
import type { TurnMcpServer } from '@paddock/protocol';
import { ProgramTransport } from './program-transport.ts';

/**
 * How long a server may take to start and answer `initialize` and its tool listing: long enough for
 * the first `npx -y <server>` of a sandbox, which installs the server and its dependencies through
 * the egress proxy first.
 */
const connectTimeoutMs = 90_000;
/** A tool call's bound, like the shell tool's default. */
const callTimeoutMs = 10 * 60_000;
/** How much of a command server's stderr explains why it failed. */
const stderrTail = 300;

/** The relay answered 401: the server wants an authorization the agent does not have. */
export class McpNeedsAuthError extends Error {}

/** A connected MCP server: its tools, and a way to call them. */
export interface McpConnection {
  readonly tools: McpTool[];
  /**
   * False once a `stdio` server's process has exited, even before its end reached the client (a
   * zombie not yet reaped): a turn starting then starts it again rather than offering a dead server.
   */
  alive(): Promise<boolean>;
  call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpToolResult>;
  close(): Promise<void>;
}

export interface McpConnectionOptions {
  server: TurnMcpServer;
  sandbox: SandboxHands;
  /** The sandbox's environment (the tools' env: the agent's secrets, PADDOCK_API_URL, PADDOCK_TOKEN…). */
  env: Record<string, string>;
  workspaceDir: string;
  /** The thread's MCP relay on the Paddock server, as the runner reaches it, and the thread's token. */
  relay: { url: (server: string) => string; token: string };
  /** The connection ended without `close` (the server exited, the stream broke). */
  onLost(): void;
}

/**
 * Connects to one of the agent's MCP servers with the MCP SDK's client, in the runner, and lists its
 * tools. A `stdio` server is started in the sandbox, in the workspace, with the sandbox's environment
 * and its own `env` over it, kept across turns; its stdio is relayed by the supervisor. An `http`
 * server is reached through the Paddock server's relay for this thread, with the thread's token (the
 * relay adds the server's stored headers, which never come here).
 */
export async function openMcpConnection(options: McpConnectionOptions): Promise<McpConnection> {
  const { server, env } = options;
  let stderr = '';
  let transport: Transport;
  let program: SandboxProgram | undefined;
  if (server.transport === 'stdio') {
    program = await options.sandbox.spawn({
      argv: [server.command, ...server.args],
      env: { ...env, ...server.env },
      cwd: options.workspaceDir,
      stdin: true,
      keep: true,
    });
    program.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-stderrTail);
    });
    transport = new ProgramTransport(program);
  } else {
    transport = new StreamableHTTPClientTransport(new URL(options.relay.url(server.name)), {
      requestInit: { headers: { authorization: `Bearer ${options.relay.token}` } },
    });
  }
  const client = new Client({ name: 'paddock-runner', version: '0.1.0' });
  let closing = false;
  let connected = false;
  client.onclose = () => {
    // Before it connected, the failure is the connect's own.
    if (connected && !closing) options.onLost();
  };
  const close = async () => {
    closing = true;
    await client.close().catch(() => {});
  };
  const bound = { timeout: connectTimeoutMs };
  try {
    await client.connect(transport, bound);
    const tools: McpTool[] = [];
    if (client.getServerCapabilities()?.tools) {
      let cursor: string | undefined;
      for (let page = 0; page < 50; page++) {
        const listed = await client.listTools(cursor ? { cursor } : undefined, bound);
        for (const tool of listed.tools)
          tools.push({
            server: server.name,
            name: tool.name,
            description: tool.description,
            inputSchema: tool.inputSchema,
          });
        cursor = listed.nextCursor;
        if (!cursor) break;
      }
    }
    connected = true;
    return {
      tools,
      alive: async () => (program ? program.alive() : true),
      async call(tool, args, signal) {
        const result = (await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: callTimeoutMs,
          resetTimeoutOnProgress: true,
        })) as CallToolResult;
        return { text: resultText(result), isError: result.isError === true };
      },
      close,
    };
  } catch (error) {
    await close();
    // A server that exited at once says why on stderr, which ends with its exit: waited to its end
    // rather than for the exit, which a program that ended before anyone listened has already had.
    if (program)
      await Promise.race([
        finished(program.stderr).catch(() => {}),
        new Promise((resolve) => setTimeout(resolve, 1_000)),
      ]);
    if (error instanceof StreamableHTTPError && error.code === 401)
      throw new McpNeedsAuthError('the server needs an authorization the agent does not have');
    throw new Error(describeFailure(error, stderr.trim()));
  }
}

/** The text of a tool's result: its text parts, other parts named, structured content as JSON. */
function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'resource':
        return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}]`;
      case 'resource_link':
        return `[resource link ${part.uri}]`;
      default:
        return `[${part.type} ${part.mimeType}]`;
    }
  });
  if (parts.length === 0 && result.structuredContent) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

function describeFailure(error: unknown, stderr: string): string {
  let reason: string;
  if (error instanceof StreamableHTTPError) reason = `HTTP ${error.code}`;
  else if (error instanceof McpError) reason = error.message;
  else reason = error instanceof Error ? error.message : String(error);
  const lastLine = stderr.split('\n').at(-1);
  return lastLine ? `${reason} (stderr: ${lastLine})` : reason;
}
