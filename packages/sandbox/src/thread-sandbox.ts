import {
  type DraftEvent,
  type EventData,
  type SandboxExec,
  type SandboxExecResult,
  type SteeredMessage,
  sandboxExecResultSchemas,
  type TurnCommand,
  type TurnResult,
} from '@paddock/protocol';
import type { ModelMessage } from 'ai';
import type { SupervisorMessage } from './protocol.ts';
import type { SandboxExit, SandboxProcess } from './provider.ts';

export type SandboxStatus = EventData['sandbox.status'];
export type EntrypointStream = EventData['entrypoint.output']['stream'];
export type EntrypointOutputListener = (stream: EntrypointStream, text: string, exitCode?: number) => void;

interface PendingTurn {
  turnId: string;
  onEvent: (event: DraftEvent) => void;
  resolve: (result: TurnResult<ModelMessage>) => void;
}

interface PendingEntrypoint {
  onOutput?: EntrypointOutputListener;
  resolve: (exitCode: number) => void;
  reject: (error: Error) => void;
}

interface PendingExec {
  op: SandboxExec['op'];
  resolve: (result: SandboxExecResult) => void;
  reject: (error: Error) => void;
}

let steerCount = 0;
let execCount = 0;

/** One thread's running sandbox: routes the supervisor's messages to whoever waits for them. */
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
  /** The supervisor is gone; nothing sent now would ever be answered. */
  gone = false;
  #turn: PendingTurn | undefined;
  #entrypoint: PendingEntrypoint | undefined;
  readonly #steers = new Map<string, (delivered: boolean) => void>();
  readonly #execs = new Map<string, PendingExec>();

  constructor(
    sandbox: SandboxProcess,
    log: (level: 'info' | 'warn' | 'error', message: string) => void,
    onStatus?: (status: SandboxStatus) => void,
  ) {
    this.sandbox = sandbox;
    this.onStatus = onStatus;
    sandbox.onMessage((message) => this.#route(message, log));
    void sandbox.exited.then((exit) => this.#settleOnExit(exit));
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
    return this.#turn?.turnId;
  }

  /** The environment everything in the sandbox runs with; the first command it gets, and once only. */
  configure(env: Record<string, string>): void {
    this.sandbox.send({ type: 'configure', env });
  }

  runEntrypoint(script: string, onOutput?: EntrypointOutputListener): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#entrypoint = { onOutput, resolve, reject };
      this.sandbox.send({ type: 'entrypoint', script });
    });
  }

  runTurn(command: TurnCommand, onEvent: (event: DraftEvent) => void): Promise<TurnResult<ModelMessage>> {
    if (this.gone) return Promise.resolve(sandboxExited('the sandbox is gone'));
    if (this.#turn) {
      return Promise.reject(new Error(`turn ${this.#turn.turnId} is still running in this sandbox`));
    }
    return new Promise((resolve) => {
      this.#turn = { turnId: command.turn_id, onEvent, resolve };
      this.sandbox.send({ type: 'turn', ...command });
    });
  }

  /** Offers messages to the running turn; answers whether it took them (false once the turn is over). */
  steer(turnId: string, messages: SteeredMessage[]): Promise<boolean> {
    if (this.gone || this.#turn?.turnId !== turnId) return Promise.resolve(false);
    const steerId = `steer-${++steerCount}`;
    return new Promise((resolve) => {
      this.#steers.set(steerId, resolve);
      this.sandbox.send({ type: 'steer', turn_id: turnId, steer_id: steerId, messages });
    });
  }

  /** Runs code (or probes the languages) beside any turn; rejects if the sandbox is gone or dies meanwhile. */
  exec<E extends SandboxExec>(request: E): Promise<SandboxExecResult<E>> {
    if (this.gone) return Promise.reject(new Error('the sandbox is gone'));
    const execId = `exec-${++execCount}`;
    return new Promise((resolve, reject) => {
      this.#execs.set(execId, { op: request.op, resolve: resolve as PendingExec['resolve'], reject });
      this.sandbox.send({ type: 'exec', exec_id: execId, request });
    });
  }

  #route(message: SupervisorMessage, log: (level: 'info' | 'warn' | 'error', message: string) => void): void {
    switch (message.type) {
      case 'entrypoint.output':
        this.#entrypoint?.onOutput?.(message.stream, message.text);
        return;
      case 'entrypoint.exit': {
        const entrypoint = this.#entrypoint;
        this.#entrypoint = undefined;
        entrypoint?.resolve(message.exit_code);
        return;
      }
      case 'event':
        if (this.#turn?.turnId === message.turn_id) this.#turn.onEvent(message.event);
        return;
      case 'turn.result': {
        const turn = this.#turn;
        if (turn?.turnId !== message.turn_id) return;
        this.#turn = undefined;
        turn.resolve(message.result);
        return;
      }
      case 'steer.result':
        this.#steers.get(message.steer_id)?.(message.delivered);
        this.#steers.delete(message.steer_id);
        return;
      case 'exec.result': {
        const exec = this.#execs.get(message.exec_id);
        if (!exec) return;
        this.#execs.delete(message.exec_id);
        if (message.result === undefined) {
          exec.reject(new Error(message.error ?? 'the sandbox did not run the code'));
          return;
        }
        const result = sandboxExecResultSchemas[exec.op].safeParse(message.result);
        if (result.success) exec.resolve(result.data);
        else {
          exec.reject(new Error('the sandbox answered the code run with a malformed result'));
          this.sandbox.breakOff(`exec.result: not a result of ${exec.op}`);
        }
        return;
      }
      case 'log':
        log(message.level, `sandbox ${this.sandbox.id}: ${boundedLogText(message.message)}`);
        return;
      case 'ready':
      case 'warm':
      case 'agents.started':
        return;
    }
  }

  #settleOnExit(exit: SandboxExit): void {
    this.gone = true;
    const how = exitAccount(exit);
    this.#entrypoint?.reject(new Error(`sandbox ${this.sandbox.id} exited during the entrypoint (${how})`));
    this.#entrypoint = undefined;
    for (const resolve of this.#steers.values()) resolve(false);
    this.#steers.clear();
    for (const { reject } of this.#execs.values())
      reject(new Error(`the sandbox exited during a code run (${how})`));
    this.#execs.clear();
    const turn = this.#turn;
    this.#turn = undefined;
    if (!turn) return;
    if (exit.protocolError !== undefined) turn.resolve(sandboxProtocolError());
    else if (this.stopping === true)
      turn.resolve({ stopReason: 'cancelled', messages: [], lastAssistantText: '' });
    else if (this.stopping) {
      turn.resolve({
        stopReason: 'error',
        messages: [],
        lastAssistantText: '',
        error: { ...this.stopping, retryable: false },
      });
    } else turn.resolve(sandboxExited(`the sandbox exited during the turn (${how})`));
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
