import { homedir } from 'node:os';
import { join } from 'node:path';

/**
 * The program cache test servers and runners share (`PADDOCK_HARNESS_CACHE`): one per machine across
 * runs, so the coding-agent programs are fetched from the npm registry once, not per test or per run.
 */
export function testHarnessCache(): string {
  return process.env.PADDOCK_HARNESS_CACHE ?? join(homedir(), '.cache', 'paddock-test', 'harnesses');
}
