import type { HarnessPrograms } from '@paddock/core';
import { harnessProfiles, ProgramCache } from '@paddock/harness';
import type { HarnessProfile } from '@paddock/protocol';
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
