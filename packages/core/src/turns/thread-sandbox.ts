import { join } from 'node:path';
import {
  type MachineKind,
  type MachineSize,
  newId,
  providerFacts,
  type Scope,
  timestamp,
} from '@paddock/protocol';
import {
  type AgentRow,
  recordLiveSandbox,
  revokeHeldThreadTokens,
  revokeThreadTokens,
  revokeToken,
  setThreadMachine,
  setTokenHolder,
  type ThreadRow,
} from '@paddock/store';
import { sandboxNetwork } from '../agents/network-policy.ts';
import { mintToken } from '../auth/mint-token.ts';
import type { Services } from '../context.ts';
import { admitSandbox, markSandboxLive, releaseSandbox } from '../machines/live-sandboxes.ts';
import { lifecycleFor } from '../machines/machine-lifecycle.ts';
import { bootSize } from '../machines/machine-size.ts';
import { remoteSkills, skillFolders } from '../skills/skill-folders.ts';
import { placeThread, type TurnEventSink } from './sandbox-host.ts';

/**
 * The scopes of a sandbox's thread token. Besides `read` and `publish`, sandbox credentials carry the
 * two internal scopes (spec, Authentication 9): `code:execute`, so the agent can run code in its own
 * task, and `messages:write_roles`, so it can append messages of other roles to its thread.
 */
const sandboxScopes: Scope[] = ['read', 'publish', 'code:execute', 'messages:write_roles'];

/** What a boot uses of the services besides the store and the log, which a verb's context has. */
export type BootServices = Pick<
  Services,
  | 'sandboxes'
  | 'machines'
  | 'revocations'
  | 'secrets'
  | 'nodeId'
  | 'sandboxLimits'
  | 'workspacesDir'
  | 'sharedFoldersDir'
  | 'skillsDir'
  | 'network'
>;

/** What a boot uses of the services (the turn executor's, a code run's, a file read's). */
export type SandboxServices = BootServices & Pick<Services, 'store' | 'log'>;

/**
 * Boots the thread's sandbox unless it runs, with a fresh thread token. The token that counts is the
 * one the running sandbox holds: the others are revoked once the boot says which that is (a
 * sandbox a detached runner kept running while no server was connected keeps its own), and it is
 * revoked in turn when the host reports that sandbox's end (stopped, idle-stopped, expired, or
 * exited). Boot status and entrypoint output go to `emit` (a turn's events); without it they are
 * dropped, and an entrypoint that fails is only logged.
 */
export async function ensureThreadSandbox(
  services: SandboxServices,
  thread: ThreadRow,
  agent: AgentRow,
  emit?: TurnEventSink,
): Promise<void> {
  const { store, sandboxes, log } = services;
  placeThread(sandboxes, thread.id, agent);
  if (sandboxes.isRunning(thread.id)) return;
  const kind = agent.machine_kind as MachineKind;
  // A self-hosted runner's machine does not see this server's folders: it writes its own from
  // the versions' files, which it asks for over its link while the boot is open.
  const remote = kind === 'sandbox_e';
  const skills = remote ? [] : await skillFolders(store.db, services.skillsDir, thread);
  const skillVersions = remote ? await remoteSkills(store.db, thread) : [];
  await claimSandbox(services, thread, kind);
  const lifecycle = await lifecycleFor(store.db, kind, thread, services.machines);
  const minted = await store.transaction((trx) =>
    mintToken(trx, {
      kind: 'thread',
      userId: thread.owner_user_id,
      name: `sandbox of thread ${thread.id}`,
      scopes: sandboxScopes,
      threadId: thread.id,
      holder: holderOf(services, thread.id),
    }),
  );
  // This boot's token, not the thread's: a sandbox booted again meanwhile keeps its own.
  const sandboxEnded = () =>
    revokeToken(store.db, minted.id, timestamp()).then(
      () => services.revocations.revoked(),
      (err: unknown) => log.error({ err, thread_id: thread.id }, 'revoking an ended sandbox token failed'),
    );
  const secrets: Record<string, string> = agent.secrets_enc
    ? JSON.parse(services.secrets.open(agent.secrets_enc))
    : {};
  // Made by the runner's boot (taking a standby's over when it can), or there already.
  const workspaceDir = join(services.workspacesDir, thread.id);
  const booted = await sandboxes
    .ensure(thread.id, {
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
      onStatus: (status) => {
        const report = () => void emit?.({ type: 'sandbox.status', data: status });
        // Revoked before the end is reported: whoever sees the report finds the token refused.
        if (status.status === 'stopped' || status.status === 'exited') {
          void releaseSandbox(store.db, thread.id).catch((err) =>
            log.warn({ err, thread_id: thread.id }, 'releasing a stopped sandbox failed'),
          );
          void sandboxEnded().then(report);
        } else report();
      },
      lifecycle,
      sharedDir: providerFacts[kind].sharedFolders
        ? join(services.sharedFoldersDir, thread.team_id)
        : undefined,
      skills: skills.length > 0 ? skills : undefined,
      skillVersions: skillVersions.length > 0 ? skillVersions : undefined,
      network: sandboxNetwork(services, agent),
    })
    .catch(async (error: unknown) => {
      // No sandbox holds the token of a boot that failed.
      await revokeToken(store.db, minted.id, timestamp());
      throw error;
    });
  await store.transaction(async (trx) => {
    if (booted) {
      await revokeThreadTokens(trx, thread.id, timestamp(), minted.id);
      // The host that took it, now that the boot says (a detached runner is picked at boot).
      await setTokenHolder(trx, minted.id, holderOf(services, thread.id));
    } else await revokeToken(trx, minted.id, timestamp());
    const machineId = services.sandboxes.runnerFor(thread.id) ?? services.nodeId;
    await recordLiveSandbox(trx, thread.id, { sandboxId: newId(), machineId, booted });
    // The thread's turns and workspace requests go to the node that reaches this machine from now.
    await setThreadMachine(trx, thread.id, machineId);
  });
  services.revocations.revoked();
}

/** Which host holds the thread's sandbox, as its token records it (see `TokensTable.holder`). */
function holderOf(services: Pick<Services, 'sandboxes' | 'nodeId'>, threadId: string): string {
  const runnerId = services.sandboxes.runnerFor(threadId);
  return runnerId === undefined ? `node:${services.nodeId}` : `runner:${runnerId}`;
}

/**
 * At start-up: this server's own sandboxes died with its previous process (a crash, kill -9), so
 * the thread tokens they held are revoked. Detached runners' sandboxes outlive a server and keep
 * theirs (their holder is the runner).
 */
export async function revokeTokensOfDeadSandboxes(
  services: Pick<Services, 'store' | 'nodeId'>,
): Promise<number> {
  return revokeHeldThreadTokens(services.store.db, `node:${services.nodeId}`, timestamp());
}

/**
 * Admits the thread's sandbox under its organization's limit (429 `sandbox_limit_reached` when the
 * organization is at it) and counts it as live from now on; a boot calls it first.
 */
export async function claimSandbox(
  services: Pick<Services, 'store' | 'sandboxLimits'>,
  thread: ThreadRow,
  kind: MachineKind,
): Promise<void> {
  await services.store.transaction(async (trx) => {
    await admitSandbox(trx, services.sandboxLimits, thread, kind);
    await markSandboxLive(trx, services.sandboxLimits, thread.id);
  });
}
