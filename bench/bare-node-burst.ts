import { spawn } from 'node:child_process';
import { supervisorNodeFlags } from '@paddock/sandbox';

/**
 * The floor of a burst of sandboxes whose supervisor is a Node process: `count` bare Node processes
 * (the binary and flags the supervisors run with) started at once, each exiting at once; how long
 * until the last has exited, in ms. Nothing of Paddock's runs: no sandbox, no server, no turn.
 */
export async function bareNodeBurstMs(count = 100): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [...supervisorNodeFlags, '-e', '0'], { stdio: 'ignore' });
          child.once('error', reject);
          child.once('exit', resolve);
        }),
    ),
  );
  return Math.round(performance.now() - started);
}
