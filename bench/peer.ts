import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { freePort, waitForHttp } from './processes.ts';
import { pssMiB } from './pss.ts';

/**
 * The peer runtime `npm run bench` measures beside Paddock: rivet-dev's sandbox-agent (a Rust
 * server that runs ACP agents as processes and speaks ACP over HTTP, with an SSE stream per
 * agent), installed from the npm registry (`@sandbox-agent/cli`), driving the least an ACP agent
 * can be (`peer-agent.ts`). It has no sandbox, no durable store and no model: what it costs is the
 * floor a runtime's own path can get to.
 */
export const peerVersion = '0.4.2';
const agentScript = join(import.meta.dirname, 'peer-agent.ts');

/** Its binary from npm's platform package; undefined where npm has none for this OS and CPU. */
function peerBinary(): string | undefined {
  try {
    return createRequire(import.meta.url).resolve(
      `@sandbox-agent/cli-${process.platform}-${process.arch}/bin/sandbox-agent`,
    );
  } catch {
    return undefined;
  }
}

export interface Peer {
  base: string;
  token: string;
  stop(): Promise<void>;
}

/** Starts the peer with a home of its own under `dir`; null where it is not installed. */
export async function startPeer(dir: string): Promise<Peer | null> {
  const binary = peerBinary();
  if (!binary) return null;
  const home = join(dir, 'peer-home');
  // It starts each agent through a launcher in its data dir. Its own `mock` agent only echoes
  // JSON-RPC back, so the bench's launcher for that name starts the streaming agent instead.
  const launchers = join(home, '.local/share/sandbox-agent/bin/agent_processes');
  mkdirSync(launchers, { recursive: true });
  writeFileSync(join(launchers, 'mock-acp'), `#!/bin/sh\nexec '${process.execPath}' '${agentScript}'\n`, {
    mode: 0o755,
  });
  const port = await freePort();
  const token = randomBytes(16).toString('hex');
  const child = spawn(binary, ['server', '--port', String(port), '--token', token, '--no-telemetry'], {
    // Warnings only, as the Paddock server in the bench (PADDOCK_LOG_LEVEL=warn).
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, RUST_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const base = `http://127.0.0.1:${port}`;
  await waitForHttp(`${base}/v1/health`, child);
  const stop = async () => {
    // Its agents end with their stdin.
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  };
  return { base, token, stop };
}

let conversations = 0;

/** One agent of the peer's and its session: ACP requests POSTed, its messages read from the SSE stream. */
class PeerConversation {
  readonly #url: string;
  readonly #headers: Record<string, string>;
  #nextId = 1;
  #sessionId = '';
  #reader: ReadableStreamDefaultReader<string> | undefined;
  #buffer = '';

  private constructor(peer: Peer) {
    this.#url = `${peer.base}/v1/acp/bench-${process.pid}-${++conversations}`;
    this.#headers = { authorization: `Bearer ${peer.token}`, 'content-type': 'application/json' };
  }

  /** Starts the agent (`initialize`), opens its stream and a session. */
  static async open(peer: Peer): Promise<PeerConversation> {
    const conversation = new PeerConversation(peer);
    await conversation.#request('initialize', { protocolVersion: 1, clientCapabilities: {} }, '?agent=mock');
    const response = await fetch(conversation.#url, {
      headers: { authorization: conversation.#headers.authorization, accept: 'text/event-stream' },
    });
    conversation.#reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    const session = await conversation.#request<{ sessionId: string }>('session/new', {
      cwd: process.cwd(),
      mcpServers: [],
    });
    conversation.#sessionId = session.sessionId;
    return conversation;
  }

  /** Sends a prompt; resolves at its first message chunk, and answers the turn's end. */
  async prompt(text: string): Promise<{ ended: Promise<unknown> }> {
    const ended = this.#request('session/prompt', {
      sessionId: this.#sessionId,
      prompt: [{ type: 'text', text }],
    });
    ended.catch(() => {});
    await this.#nextChunk();
    return { ended };
  }

  /** Stops reading its stream; its agent ends with the peer (a DELETE of it does not answer in 0.4.2). */
  async close(): Promise<void> {
    await this.#reader?.cancel();
  }

  async #request<T>(method: string, params: unknown, query = ''): Promise<T> {
    const response = await fetch(`${this.#url}${query}`, {
      method: 'POST',
      headers: this.#headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: this.#nextId++, method, params }),
    });
    const answer = (await response.json()) as { result?: T; error?: unknown; detail?: string };
    if (!response.ok || answer.error) throw new Error(`peer ${method}: ${JSON.stringify(answer)}`);
    return answer.result as T;
  }

  async #nextChunk(): Promise<void> {
    for (;;) {
      const end = this.#buffer.indexOf('\n\n');
      if (end >= 0) {
        const frame = this.#buffer.slice(0, end);
        this.#buffer = this.#buffer.slice(end + 2);
        if (frame.includes('"sessionUpdate":"agent_message_chunk"')) return;
        continue;
      }
      const { value, done } = await this.#reader!.read();
      if (done) throw new Error('the peer stream ended');
      this.#buffer += value;
    }
  }
}

/**
 * The figures Paddock's bench takes, on the peer: create → first chunk spaced and back to back,
 * follow-up → first chunk, and each live idle agent's memory (PSS).
 */
export async function peerLatency(peer: Peer, rounds: number) {
  const create = async (pauseMs: number) => {
    const samples: number[] = [];
    const open: PeerConversation[] = [];
    for (let i = 0; i < rounds; i++) {
      if (pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs));
      const started = performance.now();
      const conversation = await PeerConversation.open(peer);
      const { ended } = await conversation.prompt('hello from the bench');
      samples.push(performance.now() - started);
      await ended;
      open.push(conversation);
    }
    return { samples, open };
  };
  const burst = await create(0);
  const spaced = await create(1000);
  const followUp: number[] = [];
  const last = spaced.open.at(-1)!;
  for (let i = 0; i < rounds; i++) {
    const started = performance.now();
    const { ended } = await last.prompt(`follow-up ${i}`);
    followUp.push(performance.now() - started);
    await ended;
  }
  // Every conversation's agent is alive and idle now.
  const idlePss = pssMiB((cmdline) => cmdline.includes(agentScript));
  for (const conversation of [...burst.open, ...spaced.open]) await conversation.close();
  return { create: spaced.samples, burst: burst.samples, followUp, idlePss };
}
