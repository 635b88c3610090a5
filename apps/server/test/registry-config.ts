import { execFileSync } from 'node:child_process';
import { lookup } from 'node:dns/promises';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The npm registry's host name as this machine's npm knows it. */
export function registryHost(): string {
  return new URL(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim()).hostname;
}

/**
 * A deployment config (`PADDOCK_CONFIG`) letting sandboxes reach this machine's npm registry. It may
 * resolve to an address that is not public (a mirror, a documentation range behind a proxy): the
 * deployment allows exactly those, as one with a private mirror would, and any `others` besides.
 */
export async function registryConfig(name: string, others: string[] = []): Promise<string> {
  const addresses = (await lookup(registryHost(), { all: true })).map((a) => a.address);
  const config = join(process.env.TMPDIR ?? '/tmp', `paddock-${name}-${process.pid}.yaml`);
  writeFileSync(config, JSON.stringify({ network: { allow_addresses: [...addresses, ...others] } }));
  return config;
}
