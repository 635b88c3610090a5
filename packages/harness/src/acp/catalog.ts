import { createHash } from 'node:crypto';
import { type HarnessProfile, type HarnessProfileInput, harnessProfileSchema } from '@paddock/protocol';
import { builtinProfiles } from './profiles.ts';

/**
 * The ACP profile of each harness value: the built-in ones, with a deployment's own over them (D9:
 * a deployment may remap a value to another program). Throws on an invalid profile.
 */
export function harnessProfiles(
  overrides: Record<string, HarnessProfileInput> = {},
): Map<string, HarnessProfile> {
  const profiles = new Map<string, HarnessProfile>();
  for (const [value, profile] of Object.entries({ ...builtinProfiles, ...overrides })) {
    const parsed = harnessProfileSchema.safeParse(profile);
    if (!parsed.success)
      throw new Error(`invalid harness profile ${value}: ${parsed.error.issues[0]?.message}`);
    profiles.set(value, parsed.data);
  }
  return profiles;
}

/**
 * The folder a profile's packages are installed in, under the shared program cache: named by what
 * is installed, so two profiles with the same packages share one install and a new pin gets a new one.
 */
export function installKey(profile: Pick<HarnessProfile, 'packages'>): string {
  const pins = Object.entries(profile.packages).sort(([a], [b]) => a.localeCompare(b));
  const first = pins[0]![0].replace(/^@/, '').replace(/[^\w.-]+/g, '-');
  const digest = createHash('sha256').update(JSON.stringify(pins)).digest('hex').slice(0, 12);
  return `${first}-${digest}`;
}
