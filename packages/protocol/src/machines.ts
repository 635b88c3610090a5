import { z } from 'zod';
import { type MachineKind, type MachineSize, machineKinds, machineSizes } from './agents.ts';

/** What each provider offers (spec: "Sandbox providers"); the runtimes column is not reported (rule 2). */
export const providerFacts: Record<
  MachineKind,
  { sizes: readonly MachineSize[]; sharedFolders: boolean; codingOnly: boolean }
> = {
  sandbox_a: { sizes: machineSizes, sharedFolders: true, codingOnly: false },
  sandbox_b: { sizes: ['L'], sharedFolders: false, codingOnly: false },
  sandbox_c: { sizes: machineSizes, sharedFolders: true, codingOnly: true },
  sandbox_d: { sizes: ['L'], sharedFolders: false, codingOnly: true },
  sandbox_e: { sizes: ['L'], sharedFolders: false, codingOnly: true },
  sandbox_f: { sizes: ['L'], sharedFolders: false, codingOnly: true },
};

/** D12: `GET /v2/machines/capabilities`, every provider the service knows (rule 4). */
export const machineCapabilitiesSchema = z.object({
  providers: z.array(
    z.object({
      machine_kind: z.enum(machineKinds),
      sizes: z.array(z.enum(machineSizes)),
      shared_folders: z.boolean(),
      accelerators: z.array(z.string()),
      /**
       * Whether agent create takes this provider from the caller: switched on, runnable here, and
       * the caller inside its rollout; `reason` says which not, as agent create would.
       */
      available: z.boolean(),
      reason: z.string().optional(),
      /** How its sandboxes are isolated here (D9), when available. */
      isolation: z.string().optional(),
    }),
  ),
});
export type MachineCapabilities = z.infer<typeof machineCapabilitiesSchema>;

/**
 * How a provider's sandboxes age, as a boot carries it to the runner: while idle a sandbox is
 * stopped after `stopAfterMs`, its workspace kept (`sandbox_c` is frozen first, after
 * `freezeAfterMs`); `sandbox_d` is stopped for good at `expiresAt` (epoch ms). Without either, a
 * sandbox runs until it is stopped.
 */
export const sandboxLifecycleSchema = z.object({
  idle: z
    .object({ freezeAfterMs: z.number().nonnegative().optional(), stopAfterMs: z.number().nonnegative() })
    .optional(),
  expiresAt: z.number().optional(),
});
export type SandboxLifecycle = z.infer<typeof sandboxLifecycleSchema>;
