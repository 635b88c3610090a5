import type { TurnQueue } from '@paddock/runtime';
import { findThread, findTurn, type Store } from '@paddock/store';
import type { RunnerHubOptions } from './runner-hub/runner-hub.ts';

/**
 * What the runners' hubs do with the turns a reconnecting runner holds: offer them to the turn worker
 * through the turn queue, which it serves from before the server listens, and so before any runner
 * can connect.
 */
export function heldTurns(store: Store, turnQueue: TurnQueue): Pick<RunnerHubOptions, 'adopt' | 'reconcile'> {
  return {
    adopt: async (turn) =>
      (await turnOfAgent(store, turn.turnId, turn.agentId)) && turnQueue.adopt(turn.turnId, turn.runnerId),
    reconcile: (runnerId, held) => turnQueue.reconcile(runnerId, held),
  };
}

/**
 * Whether a turn a runner offers for adoption is one it may hold: any, for the deployment's runners;
 * only its agent's, for a self-hosted one.
 */
async function turnOfAgent(store: Store, turnId: string, agentId: string | undefined): Promise<boolean> {
  if (agentId === undefined) return true;
  const turn = await findTurn(store.db, turnId);
  const thread = turn && (await findThread(store.db, turn.thread_id));
  return thread?.agent_id === agentId;
}
