import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testHarnessCache } from '../packages/testing/src/harness-cache.ts';
import { bareNodePss } from './bare-node-pss.ts';
import { measureHarnessOverhead } from './harness-overhead.ts';
import { hundredThreads } from './hundred-threads.ts';
import { measureIngest } from './ingest.ts';
import { measureDelivery } from './nodes.ts';
import { type Peer, peerLatency, peerVersion, startPeer } from './peer.ts';
import { freePort, requestRate, start, waitForHttp } from './processes.ts';
import { sandboxPssMiB, supervisorPssMiB } from './pss.ts';
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
/** A PostgreSQL server the ingest figure may make a database on (none: SQLite only). */
const postgresUrl = process.env.BENCH_DATABASE_URL ?? process.env.PADDOCK_TEST_DATABASE_URL;
const ingestChunks = Number(process.env.BENCH_INGEST_CHUNKS ?? 20_000);
const subscribers = Number(process.env.BENCH_SUBSCRIBERS ?? 1000);

const boot = await measureSandboxBoot(dataDir, rounds);
// The built-in harness's own time around a model call (docs/performance.md).
const harnessOverhead = await measureHarnessOverhead(100);
// Live delivery to many subscribers, on one node and on two nodes of one PostgreSQL database.
const delivery = postgresUrl ? await measureDelivery(postgresUrl, { subscribers, messages: 20 }) : null;
const ingest = {
  sqlite: await measureIngest('sqlite', { chunks: ingestChunks }),
  postgres: postgresUrl
    ? await measureIngest('postgres', { chunks: ingestChunks, adminUrl: postgresUrl })
    : null,
  // Two nodes' stores on one database, each storing a turn's chunks at once: the sum, beside one.
  postgres_two_nodes: postgresUrl
    ? await measureIngest('postgres', { chunks: ingestChunks, adminUrl: postgresUrl, nodes: 2 })
    : null,
};

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

/** Everything measured on the main server, printed with the burst's figures at the end. */
let report: Record<string, unknown> = {};
const server = await startServer('server');
const { base, token } = server;
let peer: Peer | null = null;
try {
  // The peer runtime (bench/peer.ts), measured right after each of Paddock's figures.
  peer = await startPeer(dataDir);
  const latency = await firstChunkLatency(base, token, rounds);
  // Every thread the rounds made has its sandbox alive and idle now.
  const idleSandboxPss = percentiles(sandboxPssMiB());
  // The floor of anything Node-based that stays resident, beside them.
  const bareNode = await bareNodePss();
  const peerMeasured = peer && (await peerLatency(peer, rounds));
  const agents: Record<string, unknown> = {};
  for (const harness of benchHarnesses) {
    const measured = await harnessLatency(base, token, harness, harnessRounds);
    // Paddock's own part of the program's sandboxes (bwrap's init and the supervisor), after a turn.
    const supervisorPss = percentiles(supervisorPssMiB());
    agents[harness] = {
      supervisor_pss_mib: supervisorPss,
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
    const peerUrl = peer && `${peer.base}/v1/health`;
    const peerAuth = { authorization: `Bearer ${peer?.token}` };
    if (peerUrl) await requestRate(peerUrl, peerAuth, 2);
    const bareRate = await requestRate(bareUrl, {}, seconds);
    const paddockRate = await requestRate(threadUrl, auth, seconds);
    const peerRate = peerUrl ? await requestRate(peerUrl, peerAuth, seconds) : Number.NaN;
    const figures = {
      create: percentiles(latency.create),
      burst: percentiles(latency.burst),
      followUp: percentiles(latency.followUp),
    };
    const peerFigures = peerMeasured && {
      create: percentiles(peerMeasured.create),
      burst: percentiles(peerMeasured.burst),
      followUp: percentiles(peerMeasured.followUp),
      idlePss: percentiles(peerMeasured.idlePss),
    };
    const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
    report = {
      sandbox_boot_ms: { provider: boot.provider, ...percentiles(boot.samples) },
      create_to_first_chunk_ms: figures.create,
      create_to_first_chunk_back_to_back_ms: figures.burst,
      follow_up_to_first_chunk_ms: figures.followUp,
      // The follow-up's request answered: its input stored, before any turn runs.
      follow_up_acknowledged_ms: percentiles(latency.acknowledged),
      idle_sandbox_pss_mib: idleSandboxPss,
      idle_bare_node_pss_mib: bareNode,
      idle_sandbox_over_bare_node: ratio(idleSandboxPss.p50, bareNode.p50),
      built_in_harness: harnessOverhead,
      coding_agents: agents,
      ingest,
      stream_delivery: delivery,
      get_thread: {
        paddock_rps: Math.round(paddockRate),
        bare_node_http_rps: Math.round(bareRate),
        ratio: ratio(paddockRate, bareRate),
      },
      peer: peerFigures && {
        runtime: `sandbox-agent ${peerVersion} (npm @sandbox-agent/cli) driving bench/peer-agent.ts`,
        create_to_first_chunk_ms: peerFigures.create,
        create_to_first_chunk_back_to_back_ms: peerFigures.burst,
        follow_up_to_first_chunk_ms: peerFigures.followUp,
        idle_agent_pss_mib: peerFigures.idlePss,
        get_health: { rps: Math.round(peerRate), ratio_to_bare_node_http: ratio(peerRate, bareRate) },
      },
      // Paddock's figure over the peer's, from the same run: below 1 Paddock is faster or
      // smaller, except the request rate, where above 1 it serves more.
      paddock_over_peer: peerFigures && {
        create_p50: ratio(figures.create.p50, peerFigures.create.p50),
        create_back_to_back_p95: ratio(figures.burst.p95, peerFigures.burst.p95),
        follow_up_p50: ratio(figures.followUp.p50, peerFigures.followUp.p50),
        // The built-in harness alone, its model answering at once (to the request, then frame to
        // chunk): what a follow-up costs even with nothing stored, claimed or streamed.
        built_in_harness_alone_over_follow_up_p50: ratio(
          harnessOverhead.turn_to_model_request_ms.p50 + harnessOverhead.model_frame_to_chunk_ms.p50,
          peerFigures.followUp.p50,
        ),
        idle_memory_p50: ratio(idleSandboxPss.p50, peerFigures.idlePss.p50),
        authenticated_get_rps: ratio(paddockRate, peerRate),
      },
    };
  } finally {
    bare.kill();
  }
} finally {
  await peer?.stop();
  await server.stop();
}

// A hundred threads at once, on a server of their own (the sandboxes counted are theirs alone).
const burst = await startServer('hundred');
try {
  const atOnce = await hundredThreads(burst.base, burst.token);
  process.stdout.write(`${JSON.stringify({ ...report, hundred_threads_at_once: atOnce }, null, 2)}\n`);
} finally {
  await burst.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
