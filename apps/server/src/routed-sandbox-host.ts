import type { SandboxHost, SandboxPlacement } from '@paddock/core';
import type { SandboxExec, SandboxExecResult } from '@paddock/protocol';
import type { RunnerHub } from './runner-hub.ts';

/**
 * The deployment's sandboxes as core sees them: threads of `sandbox_e` agents go to the self-hosted
 * runners their users connected (the `selfHosted` hub), those of `sandbox_f` agents to the micro-VM
 * host (when there is one), every other thread to the deployment's own host (the in-process runner,
 * or its detached runners). Core places each thread (`place`) before any other call for it; the
 * choice is remembered per thread.
 */
export function routedSandboxHost(
  own: SandboxHost,
  selfHosted: RunnerHub,
  microVm?: SandboxHost,
): SandboxHost {
  const placed = new Map<string, SandboxHost>();
  const hostOf = (threadId: string): SandboxHost => placed.get(threadId) ?? own;
  return {
    place(threadId: string, placement: SandboxPlacement) {
      if (placement.machineKind === 'sandbox_e') placed.set(threadId, selfHosted);
      else if (placement.machineKind === 'sandbox_f' && microVm) placed.set(threadId, microVm);
      else placed.delete(threadId);
      hostOf(threadId).place?.(threadId, placement);
    },
    runnerFor: (threadId) => hostOf(threadId).runnerFor(threadId),
    isRunning: (threadId) => hostOf(threadId).isRunning(threadId),
    isBooting: (threadId) => hostOf(threadId).isBooting?.(threadId) ?? false,
    ensure: (threadId, options) => hostOf(threadId).ensure(threadId, options),
    runTurn: (threadId, command, onEvent) => hostOf(threadId).runTurn(threadId, command, onEvent),
    attach(threadId, turnId, fromIndex, onEvent) {
      const host = hostOf(threadId);
      if (!host.attach) throw new Error('this sandbox host cannot adopt turns');
      return host.attach(threadId, turnId, fromIndex, onEvent);
    },
    release(turnId) {
      // Turn ids are unique: the host that does not know the turn ignores it.
      own.release?.(turnId);
      selfHosted.release(turnId);
      microVm?.release?.(turnId);
    },
    interrupt: (threadId, turnId) => hostOf(threadId).interrupt(threadId, turnId),
    interruptOrphan: (threadId) => hostOf(threadId).interruptOrphan?.(threadId),
    canInterrupt: (threadId) => hostOf(threadId).canInterrupt?.(threadId) ?? true,
    steer: (threadId, turnId, messages) => hostOf(threadId).steer(threadId, turnId, messages),
    exec: <E extends SandboxExec>(threadId: string, request: E): Promise<SandboxExecResult<E>> =>
      hostOf(threadId).exec(threadId, request),
  };
}
