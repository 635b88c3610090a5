import { newId } from '@paddock/protocol';
import type { Actor, Logger } from '../src/context.ts';
import type { AdoptingSandboxHost, SandboxPlacement } from '../src/turns/sandbox-host.ts';

/** A user calling with a personal token of every mintable scope, a member of `teamIds`. */
export function userActor(userId: string, ...teamIds: string[]): Actor {
  return {
    userId,
    teamIds: new Set(teamIds),
    credential: {
      id: newId(),
      kind: 'pat',
      scopes: new Set(['read', 'publish', 'admin']),
      binding: { type: 'user' },
    },
  };
}

/** A logger that keeps what was logged at `error`, for the tests that assert a fault was logged. */
export function recordingLog(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return { errors, info: () => {}, warn: () => {}, error: (_obj, msg) => void errors.push(msg ?? '') };
}

/**
 * The sandbox seam behind a verb under test, with no sandbox behind it: it records the calls a verb
 * makes and refuses the ones that would need a sandbox, so a verb that reaches for one fails loudly.
 */
export function recordingSandboxHost() {
  const calls = { placed: [] as [string, SandboxPlacement][], orphanInterrupts: [] as string[] };
  const noSandbox = () => Promise.reject(new Error('no sandbox behind this host'));
  // A host of detached runners (one that adopts turns), so a Stop may ask it for orphan interrupts.
  const host: AdoptingSandboxHost = {
    adoptsTurns: true,
    connectedRunners: () => [],
    place: (threadId, placement) => void calls.placed.push([threadId, placement]),
    runnerFor: () => undefined,
    isRunning: () => false,
    liveThreadIds: () => [],
    isBooting: () => false,
    canInterrupt: () => true,
    ensure: noSandbox,
    runTurn: noSandbox,
    interrupt: () => {
      throw new Error('no sandbox behind this host');
    },
    attach: noSandbox,
    release: () => {},
    interruptOrphan: (threadId) => void calls.orphanInterrupts.push(threadId),
    steer: noSandbox,
    exec: noSandbox,
  };
  return { host, calls };
}

/** Steering where no turn runs here: a verb that offers an input finds it given back at once. */
export const noSteering = { deliver: async () => {}, deliveriesSettled: async () => false };

/** The turn queue with no worker behind it: wakes go nowhere, `cancelled` keeps the turns a verb cancelled. */
export function recordingTurnQueue() {
  const cancelled: string[] = [];
  return { cancelled, wake: () => {}, cancel: (turnId: string) => cancelled.push(turnId) > 0 };
}
