import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testHarnessCache } from '../packages/testing/src/harness-cache.ts';
import { freePort, requestRate, start, waitForHttp } from './processes.ts';
import { measureSandboxBoot } from './sandbox-boot.ts';
import { percentiles } from './stats.ts';
import { createLatency, firstChunkLatency, harnessLatency } from './turn-latency.ts';

/**
 * `npm run bench`: the figures of the foundation issue, as JSON. The server and the load
 * generator run as separate processes; rates are compared as a ratio taken in the same run.
 */
const root = resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(join(tmpdir(), 'paddock-bench-'));
const rounds = Number(process.env.BENCH_ROUNDS ?? 20);
/** The coding agents measured (BENCH_HARNESSES=none for none); their programs are cached across runs. */
const benchHarnesses = (
  process.env.BENCH_HARNESSES ?? 'coding_beta,coding_gamma,coding_delta,coding_epsilon,coding_zeta,coding_eta'
)
  .split(',')
  .filter((h) => h && h !== 'none');
const harnessRounds = Number(process.env.BENCH_HARNESS_ROUNDS ?? 5);
/** Between warm creates: the standby that replaces the one taken boots and starts its program meanwhile. */
const warmPauseMs = Number(process.env.BENCH_WARM_PAUSE_MS ?? 8000);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);

const boot = await measureSandboxBoot(dataDir, rounds);

/** A Paddock server as the README starts it, with a data dir of its own; answers its URL and token. */
async function startServer(name: string, env: Record<string, string> = {}) {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const serverDir = join(dataDir, name);
  const child = start([join(root, 'apps/server/src/main.ts')], {
    PORT: String(port),
    PADDOCK_DATA_DIR: serverDir,
    PADDOCK_LOG_LEVEL: 'warn',
    PADDOCK_HARNESS_CACHE: testHarnessCache(),
    ...env,
  });
  await waitForHttp(`${base}/healthz`, child);
  const token = readFileSync(join(serverDir, 'bootstrap-token'), 'utf8').trim();
  const stop = async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
  return { base, token, child, stop };
}

/**
 * A coding agent's create → first chunk with its program started ahead in the standby sandbox
 * (PADDOCK_STANDBY_HARNESSES), on a server of its own.
 */
async function warmCreateLatency(harness: string): Promise<number[]> {
  const warm = await startServer(`warm-${harness}`, { PADDOCK_STANDBY_HARNESSES: harness });
  try {
    const agent = { harness, model: 'scripted' };
    return (await createLatency(warm.base, warm.token, harnessRounds, warmPauseMs, agent)).samples;
  } finally {
    await warm.stop();
  }
}

const server = await startServer('server');
const { base, token } = server;
try {
  const latency = await firstChunkLatency(base, token, rounds);
  const agents: Record<string, unknown> = {};
  for (const harness of benchHarnesses) {
    const measured = await harnessLatency(base, token, harness, harnessRounds);
    agents[harness] = {
      create_to_first_chunk_ms: {
        cold: percentiles(measured.create),
        warm: percentiles(await warmCreateLatency(harness)),
      },
      follow_up_to_first_chunk_ms: percentiles(measured.followUp),
    };
  }

  const threadUrl = `${base}/v2/threads/${latency.threadId}`;
  const body = await (await fetch(threadUrl, { headers: { authorization: `Bearer ${token}` } })).text();
  const barePort = await freePort();
  const bare = start([join(root, 'bench/bare-server.ts'), body], { PORT: String(barePort) });
  try {
    await waitForHttp(`http://127.0.0.1:${barePort}/`, bare);
    const bareUrl = `http://127.0.0.1:${barePort}/`;
    const auth = { authorization: `Bearer ${token}` };
    // Both servers get the same warm-up first, so the ratio compares JIT-compiled steady states.
    await requestRate(bareUrl, {}, 2);
    await requestRate(threadUrl, auth, 2);
    const bareRate = await requestRate(bareUrl, {}, seconds);
    const paddockRate = await requestRate(threadUrl, auth, seconds);
    process.stdout.write(
      `${JSON.stringify(
        {
          sandbox_boot_ms: { provider: boot.provider, ...percentiles(boot.samples) },
          create_to_first_chunk_ms: percentiles(latency.create),
          create_to_first_chunk_back_to_back_ms: percentiles(latency.burst),
          follow_up_to_first_chunk_ms: percentiles(latency.followUp),
          coding_agents: agents,
          get_thread: {
            paddock_rps: Math.round(paddockRate),
            bare_node_http_rps: Math.round(bareRate),
            ratio: Math.round((paddockRate / bareRate) * 100) / 100,
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    bare.kill();
  }
} finally {
  await server.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
