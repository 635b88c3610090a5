import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { SandboxProgram } from '@paddock/harness';

/**
 * MCP's stdio transport over a program in the sandbox: its stdin and stdout, which the supervisor
 * relays, carry the newline-delimited messages as a child process's pipes would. The client runs in
 * the runner; the server runs in the sandbox, as its user.
 */
export class ProgramTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #program: SandboxProgram;
  readonly #buffer = new ReadBuffer();
  #closed = false;

  constructor(program: SandboxProgram) {
    this.#program = program;
  }

  async start(): Promise<void> {
    this.#program.stdout.on('data', (chunk: Buffer) => {
      this.#buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.#buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        this.onmessage?.(message);
      }
    });
    void this.#program.exited.then(() => this.#end());
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) throw new Error('the MCP server has exited');
    this.#program.stdin.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    this.#program.stdin.end();
    this.#program.signal('SIGTERM');
    this.#end();
  }

  #end(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.clear();
    this.onclose?.();
  }
}
