import type {
  CodeLanguageInfo,
  DraftEvent,
  EventData,
  SandboxExec,
  SandboxExecResult,
  SteeredMessage,
  TurnCommand,
  TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { SandboxExit, SandboxProcess } from './provider.ts';
import { execute } from './turns/code-run.ts';
import { runEntrypoint } from './turns/entrypoint.ts';
import { McpServers } from './turns/mcp/mcp-servers.ts';
import { sandboxHands } from './turns/sandbox-hands.ts';
import { harnessesOf } from './turns/sandbox-harnesses.ts';
import { type TurnContext, TurnRunner } from './turns/turn-runner.ts';

export type SandboxStatus = EventData['sandbox.status'];
export type EntrypointStream = EventData['entrypoint.output']['stream'];
export type EntrypointOutputListener = (stream: EntrypointStream, text: string, exitCode?: number) => void;

/** What a thread's sandbox runs with, besides the sandbox: its environment and where its turns' parts are. */
export type ThreadContext = Omit<TurnContext, 'hands'>;

/** How long the MCP servers get to close when the sandbox stops. */
const mcpCloseMs = 2_000;

/**
 * One thread's running sandbox, as its runner holds it: the thread's turns run here (the harness in
 * this process, its tools in the sandbox), and so do its code runs and its entrypoint.
 */
export class ThreadSandbox {
  readonly sandbox: SandboxProcess;
  readonly onStatus: ((status: SandboxStatus) => void) | undefined;
  /**
   * Set by a deliberate stop, so the turn it cuts off ends as cancelled (or with the given error)
   * rather than as a crash.
   */
  stopping: boolean | { code: string; message: string } = false;
  /**
   * Frozen while idle, or being frozen (set as the freeze begins, so whatever comes meanwhile wakes
   * it after); thawed before anything is sent.
   */
  #frozen = false;
  /** The freeze under way: a wake or a stop waits for it before thawing. */
  #freezing: Promise<boolean> | undefined;
  /** The thaw under way: whatever else comes meanwhile waits for it too. */
  #waking: Promise<void> | undefined;
  /** `sleeping` was reported, so the wake reports `running` again. */
  #asleep = false;
  /** The supervisor is gone; nothing asked now would ever be answered. */
  gone = false;
  readonly #hands;
  readonly #mcp = new McpServers();
  readonly #turns: TurnRunner;
  readonly #probed: { languages?: Promise<CodeLanguageInfo[]> } = {};
  #context: TurnContext | undefined;
  readonly #exit: Promise<SandboxExit>;

  /** `ready`: what the sandbox's hands wait for before they act (its shared folder being shown). */
  constructor(
    sandbox: SandboxProcess,
    nodeDir: string,
    onStatus?: (status: SandboxStatus) => void,
    ready?: Promise<void>,
  ) {
    this.sandbox = sandbox;
    this.onStatus = onStatus;
    this.#hands = sandboxHands(sandbox.supervisor, nodeDir, ready);
    this.#turns = new TurnRunner(sandbox.supervisor, harnessesOf(sandbox), this.#mcp);
    this.#exit = sandbox.exited.then((exit) => {
      this.gone = true;
      return exit;
    });
  }

  /** Asleep, or falling asleep: anything asked of it must `wake` it first. */
  get sleeping(): boolean {
    return this.#frozen || this.#waking !== undefined;
  }

  /**
   * Freezes the idle sandbox (no turn running). Claimed as it begins: a turn, a code run or a stop
   * that comes while the freezer works wakes the sandbox once it is done, instead of finding it
   * awake and being frozen with it.
   */
  async fallAsleep(): Promise<void> {
    if (this.turnId !== undefined || this.#frozen) return;
    this.#frozen = true;
    const freezing = this.sandbox.setFrozen?.(true) ?? Promise.resolve(false);
    this.#freezing = freezing;
    const done = await freezing;
    if (this.#freezing === freezing) this.#freezing = undefined;
    if (!this.#frozen || this.#waking) return;
    if (!done) {
      this.#frozen = false;
      return;
    }
    this.#asleep = true;
    this.onStatus?.({ status: 'sleeping', detail: 'frozen while idle' });
  }

  /** Thaws a sleeping (or falling asleep) sandbox; answers whether it slept. */
  async wake(): Promise<boolean> {
    if (this.#waking) {
      await this.#waking;
      return false;
    }
    if (!this.#frozen) return false;
    this.#waking = (async () => {
      await this.#freezing;
      await this.sandbox.setFrozen?.(false);
      this.#frozen = false;
      if (this.#asleep) {
        this.#asleep = false;
        this.onStatus?.({ status: 'running', detail: 'woke from sleep' });
      }
    })().finally(() => {
      this.#waking = undefined;
    });
    await this.#waking;
    return true;
  }

  /** Thaws it for a shutdown, without reporting it awake: a frozen supervisor cannot read one. */
  async thawToStop(): Promise<void> {
    if (!this.sleeping) return;
    await this.#freezing;
    await this.#waking;
    await this.sandbox.setFrozen?.(false);
    this.#frozen = false;
  }

  get turnId(): string | undefined {
    return this.#turns.turnId;
  }

  /** The environment everything in the sandbox runs with, and the rest of a turn's context; once. */
  configure(context: ThreadContext): void {
    this.#context = { ...context, hands: this.#hands };
  }

  async runEntrypoint(script: string, onOutput?: EntrypointOutputListener): Promise<number> {
    const context = this.#configured();
    const run = runEntrypoint(this.#hands, script, context, onOutput);
    const exit = this.#exit.then((exit) => {
      throw new Error(`sandbox ${this.sandbox.id} exited during the entrypoint (${exitAccount(exit)})`);
    });
    return Promise.race([run, exit]);
  }

  runTurn(command: TurnCommand, onEvent: (event: DraftEvent) => void): Promise<TurnResult<ModelMessage>> {
    if (this.gone) return Promise.resolve(sandboxExited('the sandbox is gone'));
    if (this.#turns.turnId !== undefined) {
      return Promise.reject(new Error(`turn ${this.#turns.turnId} is still running in this sandbox`));
    }
    // A deliberate stop ends the turn as the stop says, however the harness ended it.
    const turn = this.#turns
      .run(command, this.#configured(), onEvent)
      .then((result) => (this.stopping === false ? result : this.#resultOfStop()));
    // The sandbox's end ends the turn: its tools would fail one by one, and its account says why.
    const ended = this.#exit.then((exit) => {
      this.#turns.interrupt(command.turn_id);
      return exit.protocolError !== undefined
        ? sandboxProtocolError()
        : this.stopping !== false
          ? this.#resultOfStop()
          : sandboxExited(`the sandbox exited during the turn (${exitAccount(exit)})`);
    });
    return Promise.race([turn, ended]);
  }

  /** Offers messages to the running turn; answers whether it took them (false once the turn is over). */
  steer(turnId: string, messages: SteeredMessage[]): Promise<boolean> {
    if (this.gone) return Promise.resolve(false);
    return this.#turns.steer(turnId, messages);
  }

  interrupt(turnId: string): void {
    this.#turns.interrupt(turnId);
  }

  /** Runs code (or probes the languages) beside any turn; rejects if the sandbox is gone or dies meanwhile. */
  exec<E extends SandboxExec>(request: E): Promise<SandboxExecResult<E>> {
    if (this.gone) return Promise.reject(new Error('the sandbox is gone'));
    const context = this.#configured();
    const client = this.sandbox.supervisor;
    const ran = execute(
      request,
      {
        ...context,
        markRun: async (marker) => {
          await client.request({ op: 'run.begin', marker, kind: 'code' });
          return async () => {
            await client.request({ op: 'run.end', marker });
          };
        },
      },
      this.#probed,
    );
    const exit = this.#exit.then((exit) => {
      throw new Error(`the sandbox exited during a code run (${exitAccount(exit)})`);
    });
    // A run cut short by the link's end is no result: the sandbox's end says what happened.
    const result = ran.then(
      (answer) => (client.closed ? exit : answer),
      (error: unknown) => (client.closed ? exit : Promise.reject(error)),
    );
    return Promise.race([result, exit]);
  }

  /** The sandbox stops: its MCP servers are closed first (briefly: the sandbox's end kills them anyway). */
  async close(): Promise<void> {
    await Promise.race([this.#mcp.close(), new Promise((resolve) => setTimeout(resolve, mcpCloseMs))]);
  }

  #configured(): TurnContext {
    if (!this.#context) throw new Error(`sandbox ${this.sandbox.id} is not configured`);
    return this.#context;
  }

  /** The result of a turn a deliberate stop cut off: cancelled, or the stop's error (a lifetime's end). */
  #resultOfStop(): TurnResult<ModelMessage> {
    if (this.stopping === true || this.stopping === false)
      return { stopReason: 'cancelled', messages: [], lastAssistantText: '' };
    return {
      stopReason: 'error',
      messages: [],
      lastAssistantText: '',
      error: { ...this.stopping, retryable: false },
    };
  }
}

/** How a sandbox ended, for a log line or an error message. */
export function exitAccount(exit: SandboxExit): string {
  if (exit.protocolError !== undefined) return `destroyed for a protocol error: ${exit.protocolError}`;
  return exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
}

/** What the sandbox's own code may put in the server's log through a `log` message: its start only. */
export function boundedLogText(text: string): string {
  return text.length > 2000 ? `${text.slice(0, 2000)}… (${text.length} characters)` : text;
}

/**
 * Not retryable: a fresh sandbox boots for the next turn, but the agent whose code broke the
 * protocol would only do it again.
 */
export function sandboxProtocolError(): TurnResult<ModelMessage> {
  return {
    stopReason: 'error',
    messages: [],
    lastAssistantText: '',
    error: {
      code: 'sandbox_protocol_error',
      message: 'the sandbox sent the runner a malformed message, and was destroyed',
      retryable: false,
    },
  };
}

export function sandboxExited(message: string): TurnResult<ModelMessage> {
  return {
    stopReason: 'error',
    messages: [],
    lastAssistantText: '',
    error: { code: 'sandbox_exited', message, retryable: true },
  };
}
