import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pssMiB } from './pss.ts';
import { percentiles } from './stats.ts';

/**
 * The floor for anything Node-based that stays resident: idle bare Node processes (the binary the
 * sandboxes run, sharing it as they do), each doing nothing but wait; their PSS in MiB, measured
 * while the sandboxes of the run are alive.
 */
export async function bareNodePss(count = 10) {
  const marker = `paddock-bench-bare-node-${process.pid}`;
  const children = Array.from({ length: count }, () =>
    spawn(process.execPath, ['-e', `setInterval(() => {}, 1e9) // ${marker}`], { stdio: 'ignore' }),
  );
  try {
    // Long enough for start-up's garbage to be collected and its pages to settle.
    await sleep(2_000);
    return percentiles(pssMiB((cmdline) => cmdline.includes(marker)));
  } finally {
    for (const child of children) child.kill('SIGKILL');
  }
}
