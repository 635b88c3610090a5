import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createPostgresDatabase, testDatabases } from '@paddock/testing';
import { freePort } from '@paddock/testing/http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';

const postgres = testDatabases().find((database) => database.name === 'postgres');
const root = resolve(import.meta.dirname, '../../..');

/**
 * `npm run two-nodes` (the README's "Many nodes"): two nodes on one PostgreSQL database behind a
 * round-robin proxy. Requests alternate between the nodes, so a thread made through the proxy is
 * followed on the other node than the one that made it.
 */
describe.skipIf(!postgres)('the two-node script', () => {
  let dir: string;
  let drop: () => Promise<void>;
  let script: ReturnType<typeof spawn>;
  let output = '';
  let url: string;
  beforeAll(async () => {
    const database = await createPostgresDatabase(postgres!.name === 'postgres' ? postgres!.adminUrl : '');
    drop = database.drop;
    dir = mkdtempSync(join(tmpdir(), 'paddock-two-nodes-'));
    // Three ports in a row: the proxy's and the two nodes' after it.
    let port = await freePort();
    while (!(await Promise.all([port + 1, port + 2].map(isFree))).every(Boolean)) port = await freePort();
    url = `http://127.0.0.1:${port}`;
    script = spawn(process.execPath, [join(root, 'scripts/two-nodes.ts')], {
      cwd: root,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        PORT: String(port),
        PADDOCK_NODES_DIR: dir,
        PADDOCK_LOG_LEVEL: 'warn',
        PADDOCK_STANDBY_SANDBOXES: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    script.stdout!.on('data', (data: Buffer) => (output += data));
    script.stderr!.on('data', (data: Buffer) => (output += data));
    for (let i = 0; i < 600 && !output.includes('two-nodes: http://'); i++) {
      if (script.exitCode !== null) throw new Error(`the script ended:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(output).toContain(`two-nodes: ${url} → nodes on ports ${port + 1} and ${port + 2}`);
  }, 180_000);
  afterAll(async () => {
    if (script && script.exitCode === null) {
      const exited = new Promise((r) => script.once('exit', r));
      script.kill('SIGTERM');
      await exited;
    }
    await drop?.();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves one deployment from either node: a thread made on one is followed live on the other', async () => {
    const token = readFileSync(join(dir, 'a', 'bootstrap-token'), 'utf8').trim();
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${url}/v2/threads`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        agent: { instructions: 'two nodes' },
        input: '::sh echo from-one-node | tee note.txt',
      }),
    });
    expect(created.status).toBe(201);
    const { thread_id } = (await created.json()) as { thread_id: string };
    // The next request goes to the other node: it streams the thread from its first event to the end.
    const stream = await fetch(`${url}/v2/threads/${thread_id}/events/stream`, {
      headers: { ...auth, 'last-event-id': '0' },
      signal: AbortSignal.timeout(60_000),
    });
    expect(stream.status).toBe(200);
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of stream.body!) {
      text += decoder.decode(chunk, { stream: true });
      if (text.includes('event: idle')) break;
    }
    expect(text).toContain('event: turn.ended');
    expect(text).toContain('from-one-node');
    // The turn wrote into the workspace of the node that ran it: both nodes serve the file (two
    // requests in a row land on both), and a follow-up through either reads it in the same sandbox.
    for (let i = 0; i < 2; i++) {
      const file = await fetch(`${url}/v2/tasks/${thread_id}/files/content?path=note.txt`, { headers: auth });
      expect([file.status, await file.text()]).toEqual([200, 'from-one-node\n']);
    }
    // A runner's link through the proxy reaches a node (which refuses a wrong token with 401).
    const refused = await new Promise<string>((done) => {
      const socket = new WebSocket(`${url.replace('http', 'ws')}/v2/runner/link`, {
        headers: { authorization: 'Bearer not-a-runner-token' },
      });
      socket.on('unexpected-response', (_request, response) => done(String(response.statusCode)));
      socket.on('error', (error) => done(error.message));
    });
    expect(refused).toBe('401');
    // Both nodes answer for themselves too, and the script stops them both.
    for (const port of [Number(new URL(url).port) + 1, Number(new URL(url).port) + 2])
      expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const exited = new Promise<number | null>((r) => script.once('exit', (code) => r(code)));
    script.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toMatch(/\[a\] exited/);
    expect(output).toMatch(/\[b\] exited/);
  });
});

async function isFree(port: number): Promise<boolean> {
  const { createServer } = await import('node:net');
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
