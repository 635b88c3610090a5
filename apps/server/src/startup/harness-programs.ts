import type { HarnessPrograms } from '@paddock/core';
import { harnessProfiles, ProgramCache } from '@paddock/harness';
import type { HarnessProfile } from '@paddock/protocol';
import type { StandbyAgent } from '@paddock/sandbox';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { DeploymentConfig } from './deployment-config.ts';

/**
 * The program cache this node's runners install ACP programs into (`PADDOCK_HARNESS_CACHE`, default
 * `<data dir>/harnesses`), which their sandboxes see read-only. Installs are logged.
 */
export function programCache(config: Pick<Config, 'harnessCacheDir'>, logger?: Logger): ProgramCache {
  return new ProgramCache(config.harnessCacheDir, {
    log: (line) => logger?.info({ component: 'harnesses' }, line),
  });
}

/**
 * This node's ACP programs (D9): the profiles, built once from the built-in ones and the deployment's
 * remaps, and the program cache.
 */
export function harnessPrograms(
  config: Pick<Config, 'harnessCacheDir'>,
  deployment: Pick<DeploymentConfig, 'harnesses'>,
  logger?: Logger,
): HarnessPrograms & { cache: ProgramCache } {
  const overrides: Record<string, HarnessProfile> = {};
  for (const [value, profile] of Object.entries(deployment.harnesses))
    if (profile) overrides[value] = profile;
  const profiles = harnessProfiles(overrides);
  const cache = programCache(config, logger);
  return { profiles, cache, isInstalled: (profile) => cache.isInstalled(profile) };
}

/** The programs a runner's standby sandboxes start ahead (`PADDOCK_STANDBY_HARNESSES`), with their profiles. */
export function standbyAgents(
  config: Pick<Config, 'PADDOCK_STANDBY_HARNESSES'>,
  profiles: ReadonlyMap<string, HarnessProfile>,
): StandbyAgent[] {
  return config.PADDOCK_STANDBY_HARNESSES.map((name) => ({ name, profile: profiles.get(name)! }));
}
