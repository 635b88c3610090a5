import { isAdoptingHost, type Services } from '@paddock/core';
import { timestamp } from '@paddock/protocol';
import { announceMachines, withdrawMachines } from '@paddock/store';
import type { Logger } from 'pino';

/**
 * Tells the other nodes on the database which machines this node reaches (itself and the runners
 * connected to it) and where to forward their threads' requests (`nodeUrl`): every `intervalMs`, and
 * at once when a runner connects or leaves (`changed`). A node that stops renewing for three
 * intervals counts as gone, and its threads' turns and requests are taken where they arrive; a
 * clean shutdown withdraws them at once. Made before the runners' hubs (which call `changed`),
 * started once the server listens.
 */
export interface MachinePresence {
  changed(): void;
  start(
    services: Pick<Services, 'store' | 'nodeId' | 'sandboxes'>,
    options: { nodeUrl: () => string; intervalMs: number; logger: Logger },
  ): void;
  stop(): Promise<void>;
}

export function machinePresence(): MachinePresence {
  let announce: (() => void) | undefined;
  let stop = async () => {};
  return {
    changed: () => announce?.(),
    start({ store, nodeId, sandboxes }, options) {
      let running: Promise<void> | undefined;
      let again = false;
      announce = () => {
        if (running) {
          again = true;
          return;
        }
        const runners = isAdoptingHost(sandboxes) ? sandboxes.connectedRunners() : [];
        const machines = [
          { id: nodeId, kind: 'node' as const },
          ...runners.map((r) => ({
            id: r.runnerId,
            kind: r.selfHosted ? ('self_hosted' as const) : ('runner' as const),
          })),
        ];
        const until = timestamp(new Date(Date.now() + 3 * options.intervalMs));
        running = announceMachines(store.db, { nodeId, nodeUrl: options.nodeUrl(), machines }, until)
          .catch((error: unknown) => options.logger.error({ err: error }, 'announcing this node failed'))
          .finally(() => {
            running = undefined;
            if (again) {
              again = false;
              announce?.();
            }
          });
      };
      announce();
      const timer = setInterval(announce, options.intervalMs);
      timer.unref();
      stop = async () => {
        clearInterval(timer);
        announce = undefined;
        await running;
        await withdrawMachines(store.db, nodeId).catch((error: unknown) =>
          options.logger.error({ err: error }, 'withdrawing this node failed'),
        );
      };
    },
    stop: () => stop(),
  };
}
