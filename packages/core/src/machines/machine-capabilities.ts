import type { MachineCapabilities } from '@paddock/protocol';
import type { Ctx } from '../context.ts';

/** D12: every provider the service knows, with what it offers and whether this deployment can run it. */
export function machineCapabilities({ ctx }: { ctx: Ctx }): MachineCapabilities {
  return ctx.providers.capabilities();
}
