import { createHash } from 'node:crypto';
import {
  type HarnessName,
  type MachineCapabilities,
  type MachineKind,
  machineKinds,
  providerFacts,
} from '@paddock/protocol';
import { PaddockError } from '../errors.ts';

/** A provider's switch and rollout in the deployment config (D4). */
export interface ProviderSettings {
  enabled: boolean;
  /** Without one, every account may use the provider; with one, only the accounts it includes. */
  rollout?: { orgs: string[]; users: string[]; percent: number };
}

/** Whether this deployment can run a provider at all, and if not, why. */
export interface ProviderAvailability {
  available: boolean;
  reason?: string;
  isolation?: string;
  /** False where this host cannot give the provider's sandboxes their shared folder. */
  sharedFolders?: boolean;
}

/** Whom an agent is created for: the caller, and the organization of the team it goes in. */
export interface ProviderAccount {
  userId: string;
  orgId: string;
}

export interface ProviderPolicy {
  /** Throws the D4 error when this account may not create an agent on this provider. */
  check(machineKind: MachineKind, harness: HarnessName, account: ProviderAccount): void;
  /**
   * Every provider the service knows, enabled or not (spec rule 4). With an account, `available`
   * says whether that account may create agents on it (switched on, runnable here, inside its
   * rollout), with agent create's reason when not; without, whether this deployment can run it.
   */
  capabilities(account?: ProviderAccount): MachineCapabilities;
}

export function createProviderPolicy(
  settings: Partial<Record<MachineKind, ProviderSettings>>,
  /** Read on each call: the local provider's isolation is known only once the runner is up. */
  availability: () => Record<MachineKind, ProviderAvailability>,
): ProviderPolicy {
  /** Why the account may not use the provider, in D4's order (after the harness): the error agent create throws. */
  const refusal = (
    machineKind: MachineKind,
    now: ProviderAvailability,
    account: ProviderAccount | undefined,
  ): PaddockError | undefined => {
    const setting = settings[machineKind];
    if (account && !setting?.enabled)
      return new PaddockError('provider_disabled', `${machineKind} is not enabled in this deployment`);
    if (!now.available)
      return new PaddockError('provider_unavailable', `${machineKind} cannot run here: ${now.reason}`);
    if (account && setting?.rollout && !inRollout(setting.rollout, account))
      return new PaddockError(
        'provider_not_in_rollout',
        `this account is outside the rollout of ${machineKind}`,
      );
    return undefined;
  };
  return {
    check(machineKind, harness, account) {
      if (providerFacts[machineKind].codingOnly && !harness.startsWith('coding_')) {
        throw new PaddockError(
          'runtime_not_supported',
          `${machineKind} runs coding agents only, not ${harness}`,
        );
      }
      const refused = refusal(machineKind, availability()[machineKind], account);
      if (refused) throw refused;
    },
    capabilities(account) {
      const now = availability();
      return {
        providers: machineKinds.map((kind) => {
          const { available, reason, isolation, sharedFolders } = now[kind];
          const refused = refusal(kind, now[kind], account);
          // A provider this host cannot run says why in the host's words, as it always has.
          const why = available ? refused?.message : reason;
          return {
            machine_kind: kind,
            sizes: [...providerFacts[kind].sizes],
            shared_folders: providerFacts[kind].sharedFolders && sharedFolders !== false,
            accelerators: [],
            available: refused === undefined,
            ...(why ? { reason: why } : {}),
            ...(isolation ? { isolation } : {}),
          };
        }),
      };
    },
  };
}

/** In the rollout: named user or organization, else in the first `percent` of a stable hash of the user. */
function inRollout(rollout: NonNullable<ProviderSettings['rollout']>, account: ProviderAccount) {
  if (rollout.users.includes(account.userId) || rollout.orgs.includes(account.orgId)) return true;
  const bucket = createHash('sha256').update(account.userId).digest().readUInt16BE(0) % 100;
  return bucket < rollout.percent;
}
