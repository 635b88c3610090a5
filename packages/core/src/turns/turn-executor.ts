import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type DraftEvent, type ThreadStatus, timestamp } from '@paddock/protocol';
import { appendEvents } from '@paddock/runtime';
import {
  type AgentRow,
  allocatePositions,
  findActiveTurns,
  findAgent,
  findTurn,
  finishTurn,
  insertMessages,
  listMessages,
  listQueuedInputs,
  lockThread,
  markInputsSubmitted,
  newMessageRows,
  revokeThreadTokens,
  type ThreadRow,
  type TurnRow,
  updateThread,
} from '@paddock/store';
import { mintToken } from '../auth/mint-token.ts';
import type { Services } from '../context.ts';
import { deliverMessages } from '../threads/deliver-messages.ts';
import type { QueuedMessage } from '../threads/queue-input.ts';
import { messageText, toConversation } from './conversation.ts';
import type { TurnResult } from './sandbox-host.ts';

export interface TurnExecutor {
  execute(turn: TurnRow, signal: AbortSignal): Promise<void>;
  settleExpired(turn: TurnRow): Promise<void>;
}

const cancelled: TurnResult = { stopReason: 'cancelled', messages: [], lastAssistantText: '' };

/**
 * Runs claimed turns: delivers the thread's queued inputs, makes sure its sandbox is up (minting the
 * sandbox's thread token and running the entrypoint on first boot), runs the harness there, streams
 * every event into the log, and settles the thread (D7) in one transaction with the turn's end.
 */
export function createTurnExecutor(services: Services): TurnExecutor {
  const { store, events, sandboxes, log } = services;
  /** The thread token each live sandbox holds; it is also the harness's gateway credential. */
  const sandboxTokens = new Map<string, string>();

  async function begin(turn: TurnRow): Promise<ThreadRow | undefined> {
    const started = await store.transaction(async (trx) => {
      const at = timestamp();
      const thread = await lockThread(trx, turn.thread_id, at);
      const current = await findTurn(trx, turn.id);
      if (!thread || !current || current.cancel_requested === 1) return undefined;
      const inputs = await listQueuedInputs(trx, thread.id);
      const messages = inputs.flatMap((i) => JSON.parse(i.messages) as QueuedMessage[]);
      const drafts = await deliverMessages(trx, thread.id, messages, turn.id, at);
      await markInputsSubmitted(
        trx,
        inputs.map((i) => i.id),
        turn.id,
        at,
      );
      await updateThread(trx, thread.id, { status: 'running' });
      drafts.push({ type: 'turn.started', data: { turn_id: turn.id } });
      return { thread, events: await appendEvents(trx, thread.id, turn.id, drafts) };
    });
    if (!started) return undefined;
    events.publish(started.events);
    return started.thread;
  }

  async function ensureSandbox(
    thread: ThreadRow,
    agent: AgentRow,
    emit: (e: DraftEvent) => void,
  ): Promise<string> {
    const known = sandboxTokens.get(thread.id);
    if (known && sandboxes.isRunning(thread.id)) return known;
    const minted = await store.transaction(async (trx) => {
      await revokeThreadTokens(trx, thread.id, timestamp());
      return mintToken(trx, {
        kind: 'thread',
        userId: thread.owner_user_id,
        name: `sandbox of thread ${thread.id}`,
        scopes: ['read', 'publish'],
        threadId: thread.id,
      });
    });
    sandboxTokens.set(thread.id, minted.token);
    const secrets: Record<string, string> = agent.secrets_enc
      ? JSON.parse(services.secrets.open(agent.secrets_enc))
      : {};
    const workspaceDir = join(services.workspacesDir, thread.id);
    await mkdir(workspaceDir, { recursive: true });
    await sandboxes.ensure(thread.id, {
      workspaceDir,
      env: { ...secrets, PADDOCK_TOKEN: minted.token, PADDOCK_THREAD_ID: thread.id },
      size: agent.machine_size as 'S' | 'M' | 'L',
      entrypoint: agent.entrypoint ?? undefined,
      onEntrypointOutput: (stream, text, exitCode) => {
        if (exitCode !== undefined && exitCode !== 0) {
          log.warn({ thread_id: thread.id, exit_code: exitCode }, 'entrypoint failed');
        }
        emit({
          type: 'entrypoint.output',
          data: exitCode === undefined ? { stream, text } : { stream, text, exit_code: exitCode },
        });
      },
      onStatus: (status) => emit({ type: 'sandbox.status', data: status }),
    });
    return minted.token;
  }

  async function settle(turn: TurnRow, thread: ThreadRow, model: string, result: TurnResult): Promise<void> {
    const status: ThreadStatus =
      result.stopReason === 'cancelled'
        ? 'idle'
        : result.stopReason === 'error'
          ? 'fail'
          : (result.outcome?.status ?? 'idle');
    const summary =
      result.outcome?.summary ?? (result.lastAssistantText.slice(0, 280) || result.error?.message || '');
    const committed = await store.transaction(async (trx) => {
      const at = timestamp();
      await lockThread(trx, thread.id, at);
      if (result.messages.length > 0) {
        const first = await allocatePositions(trx, thread.id, result.messages.length);
        await insertMessages(
          trx,
          newMessageRows(
            thread.id,
            turn.id,
            first,
            at,
            result.messages.map((m) => ({
              role: m.role,
              content: messageText(m),
              parts: typeof m.content === 'string' ? null : JSON.stringify(m.content),
              metadata: m.role === 'assistant' ? { model } : {},
            })),
          ),
        );
      }
      const turnStatus =
        result.stopReason === 'cancelled'
          ? 'cancelled'
          : result.stopReason === 'error'
            ? 'failed'
            : 'completed';
      await finishTurn(trx, turn.id, { status: turnStatus, stopReason: result.stopReason, at });
      const next = (await findActiveTurns(trx, thread.id)).some((t) => t.status === 'queued');
      await updateThread(trx, thread.id, { status: next ? 'running' : status });
      return appendEvents(trx, thread.id, turn.id, [
        { type: 'turn.ended', data: { stop_reason: result.stopReason } },
        { type: 'idle', data: { status, summary } },
      ]);
    });
    events.publish(committed);
  }

  return {
    async execute(turn, signal) {
      const thread = await begin(turn);
      if (!thread) {
        await store.transaction(async (trx) => {
          await finishTurn(trx, turn.id, { status: 'cancelled', stopReason: 'cancelled', at: timestamp() });
        });
        return;
      }
      const agent = (await findAgent(store.db, thread.agent_id))!;
      const model = agent.model ?? services.defaultModel;
      // Events of one turn are appended strictly in the order the harness emitted them.
      let chain: Promise<unknown> = Promise.resolve();
      let sawError = false;
      const emit = (event: DraftEvent) => {
        if (event.type === 'error') sawError = true;
        chain = chain
          .then(() => events.append(thread.id, turn.id, [event]))
          .catch((err) => log.error({ err, thread_id: thread.id }, 'appending an event failed'));
      };
      const interrupt = () => sandboxes.interrupt(thread.id, turn.id);
      signal.addEventListener('abort', interrupt);
      let result: TurnResult;
      try {
        const token = await ensureSandbox(thread, agent, emit);
        const rows = await listMessages(store.db, thread.id);
        result = signal.aborted
          ? cancelled
          : await sandboxes.runTurn(
              thread.id,
              {
                turn_id: turn.id,
                harness: agent.harness,
                model,
                instructions: agent.instructions ?? undefined,
                messages: toConversation(rows),
                gateway: { baseURL: `${sandboxes.apiUrl(thread.id)}/v2/gateway/v1`, apiKey: token },
              },
              emit,
            );
      } catch (err) {
        log.error({ err, thread_id: thread.id }, 'sandbox failed');
        const message = err instanceof Error ? err.message : String(err);
        result = {
          stopReason: 'error',
          messages: [],
          lastAssistantText: '',
          error: { code: 'sandbox_failed', message, retryable: true },
        };
      } finally {
        signal.removeEventListener('abort', interrupt);
      }
      if (result.stopReason === 'error' && result.error && !sawError)
        emit({ type: 'error', data: result.error });
      await chain;
      await settle(turn, thread, model, result);
      services.worker?.wake();
    },

    async settleExpired(turn) {
      const committed = await store.transaction(async (trx) => {
        const at = timestamp();
        const thread = await lockThread(trx, turn.thread_id, at);
        const current = await findTurn(trx, turn.id);
        if (!thread || current?.status !== 'running' || (current.lease_expires_at ?? '') >= at) return [];
        await finishTurn(trx, turn.id, { status: 'failed', stopReason: 'error', at });
        const next = (await findActiveTurns(trx, thread.id)).some((t) => t.status === 'queued');
        await updateThread(trx, thread.id, { status: next ? 'running' : 'fail' });
        const message = 'the runner of this turn stopped renewing its lease';
        return appendEvents(trx, thread.id, turn.id, [
          { type: 'error', data: { code: 'lease_expired', message, retryable: true } },
          { type: 'turn.ended', data: { stop_reason: 'error' } },
          { type: 'idle', data: { status: 'fail', summary: message } },
        ]);
      });
      events.publish(committed);
      sandboxTokens.delete(turn.thread_id);
    },
  };
}
