import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { eventTypes } from '@paddock/protocol';
import { freePort, waitUntilHealthy } from '@paddock/testing/http';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../../..');

interface Frame {
  id: string;
  type: string;
  data: { type: string; thread_id: string; seq: number; data: Record<string, unknown> };
}

/** Follows a thread's stream with a standard EventSource client until `count` idle events arrived. */
function follow(url: string, token: string, idles: number): Promise<Frame[]> {
  const source = new EventSource(url, {
    fetch: (input, init) =>
      fetch(input, { ...init, headers: { ...init?.headers, authorization: `Bearer ${token}` } }),
  });
  const frames: Frame[] = [];
  return new Promise((resolveFrames, reject) => {
    const timer = setTimeout(() => {
      source.close();
      reject(new Error(`stream timed out with ${frames.map((f) => f.type).join(',')}`));
    }, 30_000);
    for (const type of eventTypes) {
      source.addEventListener(type, (event) => {
        frames.push({ id: event.lastEventId, type: event.type, data: JSON.parse(event.data) });
        if (frames.filter((f) => f.type === 'idle').length === idles) {
          clearTimeout(timer);
          source.close();
          resolveFrames(frames);
        }
      });
    }
  });
}

describe('end to end: the server started as the README says', () => {
  let child: ChildProcess;
  let base: string;
  let token: string;
  let dataDir: string;
  let output = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'paddock-e2e-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    child = spawn('npm', ['start', '--silent'], {
      cwd: root,
      env: {
        ...process.env,
        PORT: String(port),
        PADDOCK_DATA_DIR: dataDir,
        DATABASE_URL: '',
        PADDOCK_BOOTSTRAP_TOKEN: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    await waitUntilHealthy(base, child, () => output);
    token = readFileSync(join(dataDir, 'bootstrap-token'), 'utf8').trim();
  }, 30_000);

  afterAll(() => {
    if (child.exitCode === null) process.kill(-child.pid!, 'SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps the bootstrap token and password in 0600 files, printing only where (stdout is piped)', () => {
    expect(token).toMatch(/^pdk_pat_/);
    const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
    // A log collector must not hold credentials (issue 10 §5): values only ever go to a terminal.
    expect(output).not.toContain(token);
    expect(output).not.toContain(password);
    expect(output).toContain(join(dataDir, 'bootstrap-token'));
    expect(output).toContain(join(dataDir, 'admin-password'));
    for (const file of [
      'bootstrap-token',
      'admin-password',
      'paddock.db',
      'paddock.db-wal',
      'paddock.db-shm',
    ])
      expect((statSync(join(dataDir, file)).mode & 0o777).toString(8), file).toBe('600');
  });

  it('creates a thread and follows both turns over SSE, then resumes after a seq', async () => {
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${base}/v2/threads`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        agent: {
          instructions: 'e2e',
          entrypoint: 'echo hi > /workspace/boot.txt',
          secrets: { GREETING: 'hello' },
        },
        input: '::sh echo $GREETING && cat boot.txt',
      }),
    });
    expect(created.status).toBe(201);
    const { thread_id, status } = (await created.json()) as { thread_id: string; status: string };
    expect(status).toBe('running');

    const streamUrl = `${base}/v2/threads/${thread_id}/events/stream?after=0`;
    const bothTurns = follow(streamUrl, token, 2);
    const first = await follow(streamUrl, token, 1);
    expect(first.find((f) => f.type === 'tool_call.end')!.data.data.output).toContain('hello\nhi');

    const followUp = await fetch(`${base}/v2/threads/${thread_id}/messages`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ messages: [{ content: '::sh cat boot.txt' }], run: true }),
    });
    expect(((await followUp.json()) as { run_started: boolean }).run_started).toBe(true);
    const frames = await bothTurns;
    expect(frames.map((f) => f.data.seq)).toEqual(frames.map((_, i) => i + 1));
    expect(frames.map((f) => Number(f.id))).toEqual(frames.map((f) => f.data.seq));
    expect(frames.filter((f) => f.type === 'turn.started')).toHaveLength(2);
    expect(frames.every((f) => f.data.thread_id === thread_id)).toBe(true);

    const resumeAt = frames.findIndex((f) => f.type === 'idle') + 1;
    const resumed = await follow(`${base}/v2/threads/${thread_id}/events/stream?after=${resumeAt}`, token, 1);
    expect(resumed.map((f) => f.data.seq)).toEqual(frames.slice(resumeAt).map((f) => f.data.seq));
  });

  it('walks the control plane as the README does: login, a personal token, a team agent, its key', async () => {
    const call = async <T>(method: string, path: string, bearer: string, body?: unknown, status = 200) => {
      const response = await fetch(`${base}${path}`, {
        method,
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      expect(response.status, text).toBe(status);
      return JSON.parse(text) as T;
    };
    // The admin's generated password was saved in the data dir (mode 0600).
    const password = readFileSync(join(dataDir, 'admin-password'), 'utf8').trim();
    const login = await fetch(`${base}/v2/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ username: 'admin', password }),
    });
    const { access_token: session } = (await login.json()) as { access_token: string };
    const pat = await call<{ token: string }>(
      'POST',
      '/v2/cli/tokens',
      session,
      { name: 'laptop', scopes: 'read,publish' },
      201,
    );

    const [org] = (await call<{ items: { id: string; role: string }[] }>('GET', '/v2/cli/orgs', pat.token))
      .items;
    expect(org!.role).toBe('owner');
    const [team] = (
      await call<{ items: { id: string }[] }>('GET', `/v2/cli/orgs/${org!.id}/teams`, pat.token)
    ).items;
    const agent = await call<{ id: string }>(
      'POST',
      '/v2/cli/agents',
      pat.token,
      { team_id: team!.id, name: 'Release helper' },
      201,
    );
    const listed = await call<{ items: { id: string }[] }>(
      'GET',
      `/v2/cli/orgs/${org!.id}/teams/${team!.id}/agents`,
      pat.token,
    );
    expect(listed.items[0]!.id).toBe(agent.id);

    // The agent's key starts a thread of that agent, whose turn runs to the end.
    const key = await call<{ key: string }>('POST', `/v2/cli/agents/${agent.id}/keys`, pat.token, {}, 201);
    const thread = await call<{ thread_id: string }>(
      'POST',
      '/v2/threads',
      key.key,
      { agent_id: agent.id, input: 'hello' },
      201,
    );
    const frames = await follow(`${base}/v2/threads/${thread.thread_id}/events/stream?after=0`, key.key, 1);
    expect(frames.find((f) => f.type === 'assistant.message')!.data.data.content).toBe('You said: hello');
  });

  it('shuts down gracefully on SIGTERM', async () => {
    const exited = new Promise((r) => child.once('exit', r));
    // The whole group, as a terminal or a supervisor would: npm and the server it started.
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    const until = Date.now() + 10_000;
    while (!output.includes('"msg":"stopped"') && Date.now() < until)
      await new Promise((r) => setTimeout(r, 50));
    expect(output).toContain('"msg":"shutting down"');
    expect(output).toContain('"msg":"stopped"');
    expect(
      await fetch(`${base}/healthz`).then(
        () => 'up',
        () => 'down',
      ),
    ).toBe('down');
  });
});
