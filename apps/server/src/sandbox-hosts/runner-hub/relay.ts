import type { TurnEventSink } from '@paddock/core';
import type { TurnCommand, TurnResult } from '@paddock/protocol';
import type { ServerMessage, TurnEntry } from '@paddock/sandbox';
import type { HubLogger } from './inbound.ts';

interface RelayedTurn {
  threadId: string;
  runnerId: string;
  /** The next index expected: anything below it was received already (a replay overlaps). */
  next: number;
  onEvent: TurnEventSink;
  /** Stores of this turn's events, in order; acknowledgements follow them. */
  chain: Promise<void>;
  interrupted: boolean;
  resolve(result: TurnResult): void;
  /** Set while the turn's runner is disconnected: ends the turn if it never comes back. */
  lost?: NodeJS.Timeout;
}

/**
 * The turns running on runners: each entry a runner sends (numbered events, then the result) is
 * stored in order and acknowledged once stored; a turn whose runner disconnects waits for it (or
 * a restart) `lostAfterMs`, and picks up where it left off when the runner is back.
 */
export class TurnRelay {
  readonly #turns = new Map<string, RelayedTurn>();
  /** Turns a runner listed that `adopt` took: thread and runner, until `attach` picks them up. */
  readonly #adoptable = new Map<string, { threadId: string; runnerId: string }>();
  readonly #send: (runnerId: string, message: ServerMessage) => void;
  readonly #logger: HubLogger;
  readonly #lostAfterMs: number;

  constructor(options: {
    send(runnerId: string, message: ServerMessage): void;
    logger: HubLogger;
    lostAfterMs: number;
  }) {
    this.#send = options.send;
    this.#logger = options.logger;
    this.#lostAfterMs = options.lostAfterMs;
  }

  /** Sends the turn to the runner and relays it from index 0. */
  run(threadId: string, runnerId: string, command: TurnCommand, onEvent: TurnEventSink): Promise<TurnResult> {
    const result = this.#track(command.turn_id, threadId, runnerId, 0, onEvent);
    this.#send(runnerId, { type: 'turn', thread_id: threadId, command });
    return result;
  }

  /** Relays a turn the runner kept running from `fromIndex` (adoption). */
  attach(turnId: string, threadId: string, runnerId: string, fromIndex: number, onEvent: TurnEventSink) {
    const result = this.#track(turnId, threadId, runnerId, fromIndex, onEvent);
    this.#send(runnerId, { type: 'attach', turn_id: turnId, from_index: fromIndex });
    return result;
  }

  isRelayed(turnId: string): boolean {
    return this.#turns.has(turnId);
  }

  /** The runner of a turn relayed here. */
  runnerOf(turnId: string): string | undefined {
    return this.#turns.get(turnId)?.runnerId;
  }

  /** Offers a turn a runner holds for adoption (`attach` then takes it), or withdraws the offer. */
  offer(turnId: string, holder: { threadId: string; runnerId: string } | undefined): void {
    if (holder) this.#adoptable.set(turnId, holder);
    else this.#adoptable.delete(turnId);
  }

  /** Takes the offer of a turn for adoption. */
  takeOffer(turnId: string): { threadId: string; runnerId: string } | undefined {
    const holder = this.#adoptable.get(turnId);
    this.#adoptable.delete(turnId);
    return holder;
  }

  /** A Stop of the turn: asked again of its runner should it reconnect. */
  interrupted(turnId: string): void {
    const turn = this.#turns.get(turnId);
    if (turn) turn.interrupted = true;
  }

  /** The turn's result is stored: the runner may forget everything of it. */
  release(turnId: string): void {
    const turn = this.#turns.get(turnId);
    if (!turn) return;
    this.#turns.delete(turnId);
    clearTimeout(turn.lost);
    this.#send(turn.runnerId, { type: 'ack', turn_id: turnId, index: turn.next - 1 });
  }

  /** An event or the result of a turn, from `runnerId`; what is not the next of its turn there is dropped. */
  entry(runnerId: string, entry: TurnEntry): void {
    const turn = this.#turns.get(entry.turn_id);
    // Below `next`: a replay of what this server has; above it cannot happen on an ordered socket.
    if (!turn || turn.runnerId !== runnerId || entry.index !== turn.next) return;
    turn.next++;
    const { index, turn_id: turnId } = entry;
    if (entry.type === 'turn.result') {
      const { result } = entry;
      void turn.chain.then(() => turn.resolve(result));
      return;
    }
    // Handed on at once: the turn's writer stores events in order, those that come while it writes
    // in one batch. Acked in order once stored.
    const stored = Promise.resolve().then(() => turn.onEvent(entry.event, index));
    // Its failure is taken where the chain reaches it: not an unhandled rejection meanwhile.
    stored.catch(() => {});
    turn.chain = turn.chain
      .then(() => stored)
      .then(() => this.#send(turn.runnerId, { type: 'ack', turn_id: turnId, index }))
      .catch((error: unknown) => {
        // Not stored (the store refused what the runner sent, or is down): the turn cannot go on
        // in order, so it ends here, and the runner's later frames of it are dropped.
        this.#logger.error(
          { err: error, runner_id: runnerId, turn_id: turnId, index },
          'storing a runner turn event failed',
        );
        this.end(turnId, runnerLost('an event of the turn could not be stored'));
      });
  }

  /** Ends a turn of `runnerId` that it sent a malformed frame of: its replay would be refused again. */
  malformed(runnerId: string, turnId: string): void {
    if (this.#turns.get(turnId)?.runnerId === runnerId)
      this.end(turnId, runnerError('runner_protocol_error', 'the runner sent a malformed frame of the turn'));
  }

  /** The runner disconnected: each of its turns ends as lost unless it is back within `lostAfterMs`. */
  runnerGone(runnerId: string): void {
    for (const [turnId, turn] of this.#turns) {
      if (turn.runnerId !== runnerId || turn.lost) continue;
      turn.lost = setTimeout(
        () => this.end(turnId, runnerLost('the runner did not come back')),
        this.#lostAfterMs,
      );
      turn.lost.unref();
    }
  }

  /** The runner (re)connected holding `held`: its turns here go on from where the store left off, or end. */
  runnerBack(runnerId: string, held: ReadonlySet<string>): void {
    for (const [turnId, turn] of this.#turns) {
      if (turn.runnerId !== runnerId) continue;
      if (!held.has(turnId)) {
        this.end(turnId, runnerLost('the runner restarted and no longer has the turn'));
        continue;
      }
      clearTimeout(turn.lost);
      turn.lost = undefined;
      this.#send(runnerId, { type: 'attach', turn_id: turnId, from_index: turn.next });
      if (turn.interrupted)
        this.#send(runnerId, { type: 'interrupt', thread_id: turn.threadId, turn_id: turnId });
    }
  }

  /** Ends the turn with `result`, once the events already taken are stored. */
  end(turnId: string, result: TurnResult): void {
    const turn = this.#turns.get(turnId);
    if (!turn) return;
    this.#turns.delete(turnId);
    clearTimeout(turn.lost);
    void turn.chain.then(() => turn.resolve(result));
  }

  #track(turnId: string, threadId: string, runnerId: string, next: number, onEvent: TurnEventSink) {
    return new Promise<TurnResult>((resolve) => {
      this.#turns.set(turnId, {
        threadId,
        runnerId,
        next,
        onEvent,
        chain: Promise.resolve(),
        interrupted: false,
        resolve,
      });
    });
  }
}

export function runnerLost(message: string): TurnResult {
  return runnerError('runner_lost', message, true);
}

function runnerError(code: string, message: string, retryable = false): TurnResult {
  return { stopReason: 'error', messages: [], lastAssistantText: '', error: { code, message, retryable } };
}
