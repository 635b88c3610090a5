import {
  type AdoptingSandboxHost,
  isAdoptingHost,
  type SandboxHost,
  type TurnEventSink,
} from '@paddock/core';
import type { TurnResult } from '@paddock/protocol';
import { describe, expect, it } from 'vitest';
import { routedSandboxHost } from '../src/sandbox-hosts/routed.ts';

const ended: TurnResult = { stopReason: 'end_turn', messages: [], lastAssistantText: 'done' };
const noEvents: TurnEventSink = async () => {};

/** A host that records what it is asked, as `<name> <member> <args>`. */
function fakeHost(name: string, calls: string[], threads: string[] = []): SandboxHost {
  const record = (member: string, ...args: unknown[]) => calls.push([name, member, ...args].join(' '));
  return {
    adoptsTurns: false,
    place: (threadId) => record('place', threadId),
    runnerFor: () => undefined,
    isRunning: (threadId) => threads.includes(threadId),
    isBooting: () => false,
    liveThreadIds: () => threads,
    canInterrupt: () => true,
    ensure: async () => true,
    runTurn: async (threadId) => {
      record('runTurn', threadId);
      return ended;
    },
    interrupt: (threadId, turnId) => record('interrupt', threadId, turnId),
    steer: async () => false,
    exec: async () => Promise.reject(new Error('no code runs here')),
  };
}

function fakeAdoptingHost(name: string, calls: string[], threads: string[] = []): AdoptingSandboxHost {
  const record = (member: string, ...args: unknown[]) => calls.push([name, member, ...args].join(' '));
  return {
    ...fakeHost(name, calls, threads),
    adoptsTurns: true,
    connectedRunners: () => [{ runnerId: `${name}-runner`, selfHosted: false }],
    runnerFor: () => `${name}-runner`,
    attach: async (threadId, turnId) => {
      record('attach', threadId, turnId);
      return ended;
    },
    release: (turnId) => record('release', turnId),
    interruptOrphan: (threadId) => record('interruptOrphan', threadId),
  };
}

describe('the routed sandbox host', () => {
  it('sends each thread to its provider host, else to its own, and counts every host live sandboxes', async () => {
    const calls: string[] = [];
    const routed = routedSandboxHost([
      { kinds: ['sandbox_a'], host: fakeHost('own', calls, ['t-own']) },
      { kinds: ['sandbox_b'], host: fakeHost('docker', calls, ['t-docker']) },
    ]);
    routed.place('t1', { agentId: 'a', machineKind: 'sandbox_b' });
    routed.place('t2', { agentId: 'a', machineKind: 'sandbox_a' });
    await routed.runTurn('t1', { turn_id: 'u1', harness: 'h', model: 'm', messages: [] }, noEvents);
    await routed.runTurn('t2', { turn_id: 'u2', harness: 'h', model: 'm', messages: [] }, noEvents);
    routed.interrupt('t1', 'u1');
    expect(calls).toEqual([
      'docker place t1',
      'own place t2',
      'docker runTurn t1',
      'own runTurn t2',
      'docker interrupt t1 u1',
    ]);
    expect(routed.liveThreadIds()).toEqual(['t-own', 't-docker']);
    // A thread placed on another provider later goes there from then on.
    calls.length = 0;
    routed.place('t1', { agentId: 'a', machineKind: 'sandbox_a' });
    routed.interrupt('t1', 'u3');
    expect(calls).toEqual(['own place t1', 'own interrupt t1 u3']);
  });

  it('adopts nothing when none of its hosts does', () => {
    const calls: string[] = [];
    const routed = routedSandboxHost([
      { kinds: ['sandbox_a'], host: fakeHost('own', calls) },
      { kinds: ['sandbox_b'], host: fakeHost('docker', calls) },
    ]);
    expect(routed.adoptsTurns).toBe(false);
    expect(isAdoptingHost(routed)).toBe(false);
  });

  it('adopts through the hosts that do: attach and orphans on the thread host, release on each of them', async () => {
    const calls: string[] = [];
    const routed = routedSandboxHost([
      { kinds: ['sandbox_a'], host: fakeHost('own', calls) },
      { kinds: ['sandbox_e'], host: fakeAdoptingHost('self-hosted', calls) },
      { kinds: ['sandbox_b'], host: fakeHost('docker', calls) },
    ]);
    if (!isAdoptingHost(routed)) throw new Error('the routed host adopts through its self-hosted one');
    routed.place('t-e', { agentId: 'a', machineKind: 'sandbox_e' });
    routed.place('t-a', { agentId: 'a', machineKind: 'sandbox_a' });
    calls.length = 0;
    expect(await routed.attach('t-e', 'u1', 3, noEvents)).toEqual(ended);
    expect(() => routed.attach('t-a', 'u2', 0, noEvents)).toThrow('this sandbox host cannot adopt turns');
    routed.interruptOrphan('t-e');
    // The in-process runner's turns die with the server: it has no orphans to interrupt.
    routed.interruptOrphan('t-a');
    routed.release('u1');
    expect(calls).toEqual([
      'self-hosted attach t-e u1',
      'self-hosted interruptOrphan t-e',
      'self-hosted release u1',
    ]);
    expect([routed.runnerFor('t-e'), routed.runnerFor('t-a')]).toEqual(['self-hosted-runner', undefined]);
  });
});
