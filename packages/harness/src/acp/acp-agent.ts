import { isAbsolute, join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import {
  type ClientConnection,
  client,
  type McpServer,
  ndJsonStream,
  PROTOCOL_VERSION,
  type PromptResponse,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionUpdate,
} from '@agentclientprotocol/sdk';
import type { SandboxHands, SandboxProgram } from '../sandbox-hands.ts';

/** How long a program may take to start, answer `initialize` and open (or load) a session. */
const startTimeoutMs = 120_000;
/** How much of the program's stderr explains why it failed. */
const stderrTail = 2_000;

export interface AgentProcessOptions {
  sandbox: SandboxHands;
  /** The command line; a first word that is not a path is looked up in `binDir`. */
  command: string[];
  binDir: string;
  env: Record<string, string>;
  cwd: string;
}

export interface PromptHandlers {
  onUpdate(update: SessionUpdate): void;
  onPermission(request: RequestPermissionRequest): RequestPermissionResponse;
}

/**
 * One coding-agent program, started in the sandbox and spoken to over ACP on its stdio, which the
 * supervisor relays to this client in the runner (the ACP SDK's). It outlives turns: one session
 * per thread, prompted once per turn.
 */
export class AcpAgent {
  readonly #child: SandboxProgram;
  readonly #connection: ClientConnection;
  #stderr = '';
  #exited = false;
  /** Why the program is gone (its exit and last words on stderr), once it is. */
  #failure: string | undefined;
  readonly #exit = Promise.withResolvers<void>();
  #handlers: PromptHandlers | undefined;
  #sessionId: string | undefined;
  loadSession = false;

  private constructor(child: SandboxProgram, program: string) {
    this.#child = child;
    this.#child.stderr.setEncoding('utf8');
    this.#child.stderr.on('data', (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-stderrTail);
    });
    const app = client()
      .onNotification('session/update', ({ params }) => {
        if (params.sessionId === this.#sessionId) this.#handlers?.onUpdate(params.update);
      })
      .onRequest('session/request_permission', ({ params }) => {
        if (!this.#handlers) return { outcome: { outcome: 'cancelled' } };
        return this.#handlers.onPermission(params);
      });
    this.#connection = app.connect(
      ndJsonStream(
        Writable.toWeb(this.#child.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(this.#child.stdout) as ReadableStream<Uint8Array>,
      ),
    );
    void this.#child.exited.then(({ code, signal }) => {
      this.#exited = true;
      this.#failure = `${program} exited (${signal ?? `code ${code}`})${this.#stderrNote()}`;
      this.#connection.close(new Error(this.#failure));
      this.#exit.resolve();
    });
  }

  /** Starts the program and shakes hands; rejects with the reason (and its stderr) if it cannot. */
  static async start(options: AgentProcessOptions): Promise<AcpAgent> {
    const [program, ...args] = options.command;
    const file = isAbsolute(program!) ? program! : join(options.binDir, program!);
    // Kept by the sandbox: a Stop of a turn leaves it running (its own process group all the same).
    const child = await options.sandbox
      .spawn({ argv: [file, ...args], env: options.env, cwd: options.cwd, stdin: true, keep: true })
      .catch((error: Error) => {
        throw new Error(`cannot start ${program}: ${error.message}`);
      });
    const agent = new AcpAgent(child, program!);
    try {
      const answer = await agent.#timed(
        agent.#connection.agent.request('initialize', {
          protocolVersion: PROTOCOL_VERSION,
          // The agent uses its own tools: Paddock serves no files or terminals to it.
          clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
          clientInfo: { name: 'paddock', version: '1' },
        }),
        'initialize',
      );
      agent.loadSession = answer.agentCapabilities?.loadSession === true;
      return agent;
    } catch (error) {
      // A program that died says why better than the closed connection does.
      await agent.exitedWithin(1_000);
      agent.kill();
      throw agent.#failure ? new Error(agent.#failure) : error;
    }
  }

  /** Whether its ACP connection is closed (the program's stdout ended, or it exited). */
  get disconnected(): boolean {
    return this.#connection.signal.aborted;
  }

  /** Whether the program is gone, or goes within `ms` (its stdout may close before its exit is seen). */
  async exitedWithin(ms: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([this.#exit.promise, waited]);
    clearTimeout(timer);
    return this.#exited;
  }

  /** Settles when the program is gone. */
  get exited(): Promise<void> {
    return this.#exit.promise;
  }

  /** Why the program is gone; undefined while it runs. */
  get failure(): string | undefined {
    return this.#failure;
  }

  get alive(): boolean {
    return !this.#exited;
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /**
   * Loads `saved` when the agent can (its history replays and is not shown again), else opens a new
   * session. Answers whether the saved one was loaded.
   */
  async openSession(cwd: string, mcpServers: McpServer[], saved: string | undefined): Promise<boolean> {
    if (saved && this.loadSession) {
      try {
        await this.#timed(
          this.#connection.agent.request('session/load', { sessionId: saved, cwd, mcpServers }),
          'session/load',
        );
        this.#sessionId = saved;
        return true;
      } catch (error) {
        if (!this.alive) throw error;
        // A session the program no longer has: start afresh (the caller gives it the transcript).
      }
    }
    const created = await this.#timed(
      this.#connection.agent.request('session/new', { cwd, mcpServers }),
      'session/new',
    );
    this.#sessionId = created.sessionId;
    return false;
  }

  /** Chooses the session's model (`session/set_model`, or the `model` config option where that is all there is). */
  async setModel(model: string): Promise<void> {
    const sessionId = this.#sessionId!;
    try {
      await this.#connection.agent.request('session/set_model', { sessionId, modelId: model });
    } catch {
      await this.#connection.agent.request('session/set_config_option', {
        sessionId,
        configId: 'model',
        value: model,
      });
    }
  }

  /** Runs one prompt; aborting `signal` sends `session/cancel` and the prompt ends as the agent says. */
  async prompt(text: string, handlers: PromptHandlers, signal: AbortSignal): Promise<PromptResponse> {
    const sessionId = this.#sessionId!;
    const cancel = () => void this.#connection.agent.notify('session/cancel', { sessionId }).catch(() => {});
    this.#handlers = handlers;
    signal.addEventListener('abort', cancel, { once: true });
    try {
      return await this.#connection.agent.request('session/prompt', {
        sessionId,
        prompt: [{ type: 'text', text }],
      });
    } finally {
      signal.removeEventListener('abort', cancel);
      this.#handlers = undefined;
    }
  }

  /** Kills the program and everything it started. */
  kill(): void {
    this.#child.signal('SIGKILL');
  }

  /** Why the program failed, from its last words on stderr. */
  #stderrNote(): string {
    const tail = this.#stderr.trim().split('\n').slice(-5).join('\n');
    return tail ? `: ${tail}` : '';
  }

  async #timed<T>(request: Promise<T>, what: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`${what} took over ${startTimeoutMs / 1000} s${this.#stderrNote()}`)),
        startTimeoutMs,
      );
    });
    try {
      return await Promise.race([request, timeout]);
    } finally {
      clearTimeout(timer);
    }
  }
}
