import { hostCommandsBinary, hostCommandsSourceDir } from '@paddock/host-commands';
import { buildGoProgram } from '@paddock/sandbox';
import { supervisorBinary, supervisorSourceDir } from '@paddock/supervisor';

/**
 * Vitest's global setup: Paddock's two Go programs built once before any test runs. On a machine
 * where Go has not yet compiled its own standard library the first build takes a while, and each of
 * the test workers would otherwise start it inside some test's time.
 */
export default async function buildGoPrograms(): Promise<void> {
  await buildGoProgram(supervisorSourceDir, supervisorBinary);
  await buildGoProgram(hostCommandsSourceDir, hostCommandsBinary);
}
