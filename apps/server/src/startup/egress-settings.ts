import type { NetworkSettings } from '@paddock/protocol';
import { type EgressSettings, readRegistries } from '@paddock/sandbox';
import type { Logger } from 'pino';

/**
 * What every sandbox's egress proxy on this runner decides by besides its thread's policy: the
 * deployment's domains and allowed ranges, and the registries this runner's npm, pip and apt are
 * configured with, read from the tools the first time a `registries` sandbox connects (and logged,
 * so an operator sees what that policy means here).
 */
export function egressSettings(network: NetworkSettings, logger: Logger): EgressSettings {
  let registries: Promise<readonly string[]> | undefined;
  return {
    registries: () => {
      registries ??= readRegistries({ env: process.env }).then(
        ({ sources, hosts }) => {
          logger.info({ hosts, sources }, 'the registries network policy allows these hosts');
          return hosts;
        },
        (error: unknown) => {
          logger.warn(
            { err: error },
            'reading the package registries failed: the registries policy allows none',
          );
          return [];
        },
      );
      return registries;
    },
    domains: network.domains,
    allowAddresses: network.allowAddresses,
  };
}
