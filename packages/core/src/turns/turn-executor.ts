import { type ModelSettings, modelSettingsOf, type TurnResult, timestamp } from '@paddock/protocol';
import { appendEvents, turnHandedOff, workerStopping } from '@paddock/runtime';
import {
  type AgentRow,
  claimQueuedInput,
  findAgent,
  findInput,
  findThread,
  findTurn,
  listQueuedInputs,
  lockThread,
  markInputsSubmitted,
  markTurnFinalizing,
  markTurnUninterruptible,
  setRunner,
  type ThreadRow,
  type TurnRow,
} from '@paddock/store';
import type { Services } from '../context.ts';
import { PaddockError } from '../errors.ts';
import { turnMcpServers } from '../mcp/turn-mcp-servers.ts';
import { deliverMessages } from '../threads/deliver-messages.ts';
import { giveBackInput } from '../threads/give-back-input.ts';
import { inputMessages, inputModelOptions } from '../threads/input-receipt.ts';
import type { QueuedMessage } from '../threads/queue-input.ts';
import { updateThreadStatus } from '../threads/thread-status.ts';
import { conversationCache } from './conversation-cache.ts';
import { endTurn } from './end-turn.ts';
import { turnEventWriter } from './event-writer.ts';
import { isAdoptingHost, placeThread, SandboxUnavailableError, type TurnEventSink } from './sandbox-host.ts';
import { settleAbandonedTurn, settleTurn } from './settle-turn.ts';
import { ensureThreadSandbox } from './thread-sandbox.ts';

export interface TurnExecutor {
  execute(turn: TurnRow, signal: AbortSignal): Promise<void>;
  /** Follows a turn adopted from a detached runner (its server restarted) to its end, from the next unstored event. */
  resume(turn: TurnRow, signal: AbortSignal): Promise<void>;
  settleExpired(turn: TurnRow, ownerDied?: boolean): Promise<void>;
  /** Settles a running turn its detached runner reconnected without. */
  settleLost(turn: TurnRow, runnerId: string): Promise<void>;
  /**
   * Native steering: offers a queued input to the thread's running turn. If the turn does not take
   * it (it ended first, its harness does not steer, it runs elsewhere), the input goes back to the
   * queue for the next turn, or is cancelled when a Stop came in between.
   */
  deliver(threadId: string, turnId: string, inputId: string): Promise<void>;
  deliveriesSettled(threadId: string): Promise<boolean>;
}

const cancelled: TurnResult = { stopReason: 'cancelled', messages: [], lastAssistantText: '' };

/**
 * What the executor runs on: every service but the steering it provides itself, so it is made before
 * the services are (and the turn worker after it, through the turn queue).
 */
export type ExecutorServices = Omit<Services, 'steering'>;

/**
 * Runs claimed turns: delivers the thread's queued inputs, makes sure its sandbox is up (minting the
 * sandbox's thread token and running the entrypoint on first boot), runs the harness there, streams
 * every event into the log, and settles the thread (D7) in one transaction with the turn's end.
 */
export function createTurnExecutor(services: ExecutorServices): TurnExecutor {
  const { store, events, sandboxes, log } = services;
  /** Turns followed here; `handedOver` settles once the turn is in its sandbox (or will never be). */
  const following = new Map<string, { handedOver: Promise<void>; handOver(): void }>();
  /** Deliveries under way per thread, so a Stop can answer once their outcome is known. */
  const delivering = new Map<string, Set<Promise<void>>>();
  /** The conversations of the threads it ran lately: a follow-up reads only what is new. */
  const conversations = conversationCache();
  /** Whether the runtime can interrupt the thread's turns safely (a test fault can say it cannot). */
  const canInterrupt = (threadId: string) =>
    services.faults.canInterrupt ? services.faults.canInterrupt(threadId) : sandboxes.canInterrupt(threadId);

  /**
   * Starts a claimed turn: it takes the thread's queued inputs, whose `model_options` settings it
   * applies (merged in input order, a later input's field over an earlier one's).
   */
  async function begin(turn: TurnRow): Promise<{ thread: ThreadRow; settings: ModelSettings } | undefined> {
    const started = await store.transaction(async (trx) => {
      const at = timestamp();
      const thread = await lockThread(trx, turn.thread_id, at);
      const current = await findTurn(trx, turn.id);
      if (!thread || !current) return undefined;
      if (current.cancel_requested === 1) {
        // A Stop came before the turn started: it ends here, having taken nothing.
        await endTurn(trx, thread, turn.id, { stopReason: 'cancelled' }, at);
        return undefined;
      }
      placeThread(sandboxes, thread.id, (await findAgent(trx, thread.agent_id))!);
      const runnerId = sandboxes.runnerFor(thread.id);
      if (runnerId !== undefined) await setRunner(trx, turn.id, runnerId);
      // Recorded under the thread lock as the turn starts, so a Stop on any node reads it; a Stop
      // before this point cancels a turn that never reached the runtime.
      if (!canInterrupt(thread.id)) await markTurnUninterruptible(trx, turn.id);
      const inputs = await listQueuedInputs(trx, thread.id);
      const messages = inputs.flatMap((i) => JSON.parse(i.messages) as QueuedMessage[]);
      const drafts = await deliverMessages(trx, thread.id, messages, turn.id, at);
      await markInputsSubmitted(
        trx,
        inputs.map((i) => i.id),
        turn.id,
        at,
      );
      await updateThreadStatus(trx, thread, { on: 'turn_active' });
      drafts.push({ type: 'turn.started', data: { turn_id: turn.id } });
      const settings: ModelSettings = {};
      for (const i of inputs) Object.assign(settings, modelSettingsOf(inputModelOptions(i) ?? {}));
      return { thread, settings, events: await appendEvents(trx, thread.id, turn.id, drafts) };
    });
    if (!started) return undefined;
    events.publish(started.events);
    return { thread: started.thread, settings: started.settings };
  }

  /**
   * Follows a turn in its sandbox to its end: stores its events in order, interrupts it when the
   * signal aborts, and settles it, unless the turn was handed off (to another server, or to the
   * next start of this one), which then follows it from the first event not stored.
   */
  async function follow(
    turn: TurnRow,
    thread: ThreadRow,
    signal: AbortSignal,
    start: (emit: TurnEventSink, agent: AgentRow, model: string) => Promise<TurnResult>,
  ): Promise<void> {
    let handOver = () => {};
    const handedOver = new Promise<void>((resolve) => (handOver = resolve));
    following.set(turn.id, { handedOver, handOver });
    const agent = (await findAgent(store.db, thread.agent_id))!;
    const model = agent.model ?? services.defaultModel;
    // Events of one turn are stored strictly in the order the harness emitted them, in batches.
    const writer = turnEventWriter(events, thread.id, turn.id, (err) =>
      log.error({ err, thread_id: thread.id }, 'storing an event failed'),
    );
    let sawError = false;
    const emit: TurnEventSink = (event, index) => {
      if (event.type === 'error') sawError = true;
      if (event.type === 'assistant.message.chunk') services.turnTrace.mark(thread.id, 'chunk_emitted');
      return writer.write(event, index);
    };
    const handedOff = new Promise<undefined>((resolve) => {
      signal.addEventListener('abort', () => {
        // A turn on a runner that outlives this server (detached, self-hosted) goes on for the next
        // one to adopt; one in this process can be taken over by nobody, so it is stopped.
        const outlives = sandboxes.runnerFor(thread.id) !== undefined;
        if (signal.reason === turnHandedOff || (signal.reason === workerStopping && outlives)) {
          resolve(undefined);
          if (!outlives) sandboxes.interrupt(thread.id, turn.id);
          return;
        }
        sandboxes.interrupt(thread.id, turn.id);
      });
    });
    let result: TurnResult | undefined;
    try {
      result = await Promise.race([start(emit, agent, model), handedOff]);
    } catch (err) {
      log.error({ err, thread_id: thread.id }, 'sandbox failed');
      const message = err instanceof Error ? err.message : String(err);
      result = {
        stopReason: 'error',
        messages: [],
        lastAssistantText: '',
        error: {
          code:
            err instanceof SandboxUnavailableError ||
            (err instanceof PaddockError && err.code === 'sandbox_limit_reached')
              ? err.code
              : 'sandbox_failed',
          message,
          retryable: true,
        },
      };
    } finally {
      handOver();
    }
    if (!result) {
      await writer.flushed();
      following.delete(turn.id);
      log.info({ thread_id: thread.id, turn_id: turn.id }, 'turn handed off to another server');
      return;
    }
    if (result.stopReason === 'error' && result.error && !sawError)
      void emit({ type: 'error', data: result.error });
    // The result is back: a Stop can no longer change how this turn ends, so until the settle
    // commits it answers turn_interrupt_pending. Failing to record that must not lose the result.
    await markTurnFinalizing(store.db, turn.id).catch((err) =>
      log.error({ err, thread_id: thread.id }, 'marking a turn finalizing failed'),
    );
    await writer.flushed();
    await services.faults.beforeSettle?.(turn.id);
    await settleTurn(services, { turn, thread, model, result });
    if (isAdoptingHost(sandboxes)) sandboxes.release(turn.id);
    following.delete(turn.id);
    services.turnQueue.wake();
  }

  /** Offers a claimed input to the running turn; gives it back when the turn does not take it. */
  async function deliver(threadId: string, turnId: string, inputId: string): Promise<void> {
    const input = await store.transaction(async (trx) => {
      await lockThread(trx, threadId, timestamp());
      // A turn that ended before the offer queued the next turn for this input (endTurn).
      if ((await findTurn(trx, turnId))?.status !== 'running') return undefined;
      const found = await findInput(trx, inputId);
      return found && (await claimQueuedInput(trx, inputId, turnId, timestamp())) ? found : undefined;
    });
    if (!input) return;
    const messages = inputMessages(input).map((m) => ({ id: m.id, content: m.content }));
    const turn = following.get(turnId);
    await turn?.handedOver;
    const taken = turn !== undefined && (await sandboxes.steer(threadId, turnId, messages));
    if (taken) return;
    await store.transaction(async (trx) => {
      const at = timestamp();
      await giveBackInput(trx, (await lockThread(trx, threadId, at))!, inputId, turnId, at);
    });
    services.turnQueue.wake();
  }

  return {
    async execute(turn, signal) {
      services.turnTrace.mark(turn.thread_id, 'turn_claimed');
      const begun = await begin(turn);
      if (!begun) return;
      const { thread, settings } = begun;
      services.turnTrace.mark(thread.id, 'turn_begun');
      await follow(turn, thread, signal, async (emit, agent, model) => {
        await ensureThreadSandbox(services, thread, agent, emit);
        services.turnTrace.mark(thread.id, 'sandbox_ready');
        if (signal.aborted) return cancelled;
        const messages = await conversations.read(store.db, thread.id);
        services.turnTrace.mark(thread.id, 'turn_sent');
        const running = sandboxes.runTurn(
          thread.id,
          {
            turn_id: turn.id,
            harness: agent.harness,
            harness_profile: services.harnesses?.profiles.get(agent.harness),
            model,
            instructions: agent.instructions ?? undefined,
            messages,
            model_options: settings,
            mcp_servers: turnMcpServers(services.secrets, agent.mcp_servers),
          },
          emit,
        );
        // The runner sent the turn before answering, so a steered message sent now arrives after it.
        following.get(turn.id)?.handOver();
        return running;
      });
    },

    async resume(turn, signal) {
      const thread = await findThread(store.db, turn.thread_id);
      if (!thread || !isAdoptingHost(sandboxes)) return;
      placeThread(sandboxes, thread.id, (await findAgent(store.db, thread.agent_id))!);
      const fromIndex = (turn.event_cursor ?? -1) + 1;
      log.info({ thread_id: thread.id, turn_id: turn.id, from_index: fromIndex }, 'adopted a running turn');
      await follow(turn, thread, signal, (emit) => sandboxes.attach(thread.id, turn.id, fromIndex, emit));
    },

    deliver(threadId, turnId, inputId) {
      const pending = delivering.get(threadId) ?? new Set();
      delivering.set(threadId, pending);
      const delivery = deliver(threadId, turnId, inputId).finally(() => {
        pending.delete(delivery);
        if (pending.size === 0 && delivering.get(threadId) === pending) delivering.delete(threadId);
      });
      pending.add(delivery);
      return delivery;
    },

    async deliveriesSettled(threadId) {
      const pending = delivering.get(threadId);
      if (!pending) return false;
      await Promise.allSettled([...pending]);
      return true;
    },

    settleExpired: (turn, ownerDied) =>
      settleAbandonedTurn(services, turn, { kind: ownerDied ? 'owner_died' : 'expired' }),
    async settleLost(turn, runnerId) {
      await settleAbandonedTurn(services, turn, { kind: 'runner_lost', runnerId });
      // The settle may have queued the thread's next turn: claim it now rather than at the next poll.
      services.turnQueue.wake();
    },
  };
}
