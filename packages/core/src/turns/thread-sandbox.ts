import { join } from 'node:path';
import { type MachineKind, type MachineSize, providerFacts, type Scope, timestamp } from '@paddock/protocol';
import { type AgentRow, revokeThreadTokens, revokeToken, type ThreadRow } from '@paddock/store';
import { mintToken } from '../auth/mint-token.ts';
import type { Services } from '../context.ts';
import { lifecycleFor } from '../machines/machine-lifecycle.ts';
import { bootSize } from '../machines/machine-size.ts';
import { placeThread, type TurnEventSink } from './sandbox-host.ts';

/**
 * The scopes of a sandbox's thread token. Besides `read` and `publish`, sandbox credentials carry the
 * two internal scopes (spec, Authentication 9): `code:execute`, so the agent can run code in its own
 * task, and `messages:write_roles`, so it can append messages of other roles to its thread.
 */
const sandboxScopes: Scope[] = ['read', 'publish', 'code:execute', 'messages:write_roles'];

/**
 * Boots the thread's sandbox unless it runs, with a fresh thread token. The token that counts is the
 * one the running sandbox holds: the others are revoked once the boot says which that is (a
 * sandbox a detached runner kept running while no server was connected keeps its own). Boot status
 * and entrypoint output go to `emit` (a turn's events); without it they are dropped, and an
 * entrypoint that fails is only logged.
 */
export async function ensureThreadSandbox(
  services: Services,
  thread: ThreadRow,
  agent: AgentRow,
  emit?: TurnEventSink,
): Promise<void> {
  const { store, sandboxes, log } = services;
  placeThread(sandboxes, thread.id, agent);
  if (sandboxes.isRunning(thread.id)) return;
  const kind = agent.machine_kind as MachineKind;
  const lifecycle = await lifecycleFor(store.db, kind, thread, services.machines);
  const minted = await store.transaction((trx) =>
    mintToken(trx, {
      kind: 'thread',
      userId: thread.owner_user_id,
      name: `sandbox of thread ${thread.id}`,
      scopes: sandboxScopes,
      threadId: thread.id,
    }),
  );
  const secrets: Record<string, string> = agent.secrets_enc
    ? JSON.parse(services.secrets.open(agent.secrets_enc))
    : {};
  // Made by the runner's boot (taking a standby's over when it can), or there already.
  const workspaceDir = join(services.workspacesDir, thread.id);
  const booted = await sandboxes.ensure(thread.id, {
    workspaceDir,
    env: { ...secrets, PADDOCK_TOKEN: minted.token, PADDOCK_THREAD_ID: thread.id },
    size: bootSize(kind, agent.machine_size as MachineSize),
    entrypoint: agent.entrypoint ?? undefined,
    onEntrypointOutput: (stream, text, exitCode) => {
      if (exitCode !== undefined && exitCode !== 0) {
        log.warn({ thread_id: thread.id, exit_code: exitCode }, 'entrypoint failed');
      }
      void emit?.({
        type: 'entrypoint.output',
        data: exitCode === undefined ? { stream, text } : { stream, text, exit_code: exitCode },
      });
    },
    onStatus: (status) => void emit?.({ type: 'sandbox.status', data: status }),
    lifecycle,
    sharedDir: providerFacts[kind].sharedFolders
      ? join(services.sharedFoldersDir, thread.team_id)
      : undefined,
  });
  await store.transaction(async (trx) => {
    if (booted) await revokeThreadTokens(trx, thread.id, timestamp(), minted.id);
    else await revokeToken(trx, minted.id, timestamp());
  });
}
