import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { detectProvider } from '@paddock/sandbox';

/** Provider create → supervisor `ready`, on the provider the server itself would pick. */
export async function measureSandboxBoot(dataDir: string, rounds: number) {
  const stateDir = join(dataDir, 'boot-state');
  const { provider, report } = await detectProvider({ stateDir });
  const samples: number[] = [];
  try {
    for (let i = 0; i < rounds + 2; i++) {
      const workspaceDir = join(dataDir, 'boot-workspaces', String(i));
      mkdirSync(workspaceDir, { recursive: true });
      const started = performance.now();
      const sandbox = await provider.create({
        id: `bench-${process.pid}-${i}`,
        workspaceDir,
        size: 'S',
      });
      // The first two boots warm caches; they are not counted.
      if (i >= 2) samples.push(performance.now() - started);
      await sandbox.destroy();
    }
  } finally {
    await provider.close();
  }
  return { provider: report.kind, samples };
}
