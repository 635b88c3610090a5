import type { Config } from '../startup/config.ts';
import { loadDeploymentConfig } from '../startup/deployment-config.ts';
import { harnessPrograms } from '../startup/harness-programs.ts';

const usage = `usage: paddock harnesses [VALUE ...]
Installs the programs of the ACP harness values (all of them, or those named, e.g. coding_beta) from
the npm registry into this node's program cache (PADDOCK_HARNESS_CACHE, default <data dir>/harnesses),
with the deployment config's remaps (PADDOCK_CONFIG), so no turn waits for an install.
`;

/** `paddock harnesses` (`npm run harnesses`): preinstalls the ACP programs (D9); exit 1 on a failure. */
export async function runHarnesses(config: Config, argv: string[]): Promise<void> {
  if (argv.includes('-h') || argv.includes('--help')) {
    process.stdout.write(usage);
    return;
  }
  const { profiles, cache } = harnessPrograms(config, loadDeploymentConfig(config.PADDOCK_CONFIG));
  const unknown = argv.filter((value) => !profiles.has(value));
  if (unknown.length > 0) {
    process.stderr.write(
      `paddock harnesses: not an ACP harness value: ${unknown.join(', ')} (one of ${[...profiles.keys()].join(', ')})\n`,
    );
    process.exit(2);
  }
  const wanted = argv.length > 0 ? argv : [...profiles.keys()];
  process.stdout.write(`program cache: ${cache.root}\n`);
  let failed = false;
  for (const value of wanted) {
    const profile = profiles.get(value)!;
    const name = `${value} (${profile.program} ${profile.version})`;
    if (cache.isInstalled(profile)) {
      process.stdout.write(`${name}: installed already\n`);
      continue;
    }
    try {
      const summary = await cache.ensure(profile, (line) => process.stdout.write(`${name}: ${line}\n`));
      process.stdout.write(`${name}: ${summary ?? 'installed'}\n`);
    } catch (error) {
      failed = true;
      process.stderr.write(`${name}: failed: ${(error as Error).message}\n`);
    }
  }
  if (failed) process.exit(1);
}
