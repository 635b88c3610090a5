import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Endpoints, refuseOnLegacy, resolveEndpoints } from '../src/config.ts';

const bin = resolve(import.meta.dirname, '../bin/paddock.js');
const MiB = 1024 * 1024;

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

type Event = { type: string; seq: number; data: Record<string, unknown> };
const lines = (stdout: string) => stdout.split('\n').filter(Boolean);
const events = (stdout: string) => lines(stdout).map((line) => JSON.parse(line) as Event);

describe.each(testDatabases().slice(0, 1))('paddock CLI on $name', (database) => {
  let server: TestServer;
  let dir: string;
  let agentFile: string;
  let env: Record<string, string>;

  /** The program as a subprocess; `onStderr` sees its stderr as it comes (and may kill it). */
  function start(args: string[], extraEnv: Record<string, string | undefined> = {}) {
    const child = spawn(process.execPath, [bin, ...args], {
      env: { ...env, ...extraEnv } as NodeJS.ProcessEnv,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ran: Ran = { code: null, stdout: '', stderr: '' };
    child.stdout!.on('data', (chunk: Buffer) => (ran.stdout += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (ran.stderr += chunk.toString('utf8')));
    const done = new Promise<Ran>((resolveRan) =>
      child.on('close', (code) => resolveRan({ ...ran, code: code ?? null })),
    );
    return { child, ran, done };
  }
  const cli = (args: string[], extraEnv?: Record<string, string | undefined>) => start(args, extraEnv).done;
  const ok = async (args: string[]) => {
    const ran = await cli(args);
    expect(ran.code, `paddock ${args.join(' ')}\n${ran.stderr}`).toBe(0);
    return ran;
  };
  const newThread = async () =>
    JSON.parse((await ok(['--json', 'run', agentFile])).stdout).thread_id as string;

  beforeAll(async () => {
    server = await startTestServer(database);
    dir = await mkdtemp(join(tmpdir(), 'paddock-cli-'));
    agentFile = join(dir, 'agent.yaml');
    await writeFile(agentFile, 'instructions: You are a test agent.\n');
    env = {
      PATH: process.env.PATH ?? '',
      HOME: dir,
      XDG_CONFIG_HOME: join(dir, 'config'),
      NO_COLOR: '1',
      SERVICE_TOKEN: server.token,
      PADDOCK_URL: server.url,
    };
  });
  afterAll(async () => {
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs an agent file to idle, streaming text and the tool call, exit 0', async () => {
    const ran = await ok(['run', agentFile, '::sh echo cli-says-hi']);
    expect(ran.stdout).toContain('▸ shell {"command":"echo cli-says-hi"}');
    expect(ran.stdout).toContain('✓ shell exit 0');
    expect(ran.stdout).toContain('shell exited 0:\ncli-says-hi');
    expect(ran.stdout).toContain('● idle');
    expect(ran.stdout).not.toContain('\x1b['); // NO_COLOR, not a terminal
    expect(ran.stderr).toMatch(/^thread [0-9a-f-]{36}/);
  });

  it('--json: one event a line, and exits by outcome', async () => {
    const ran = await ok(['run', '--json', agentFile, '::sh echo json-run']);
    const types = events(ran.stdout).map((e) => e.type);
    expect(types).toEqual(
      expect.arrayContaining(['user.message', 'tool_call.start', 'tool_call.end', 'idle']),
    );
    expect(types.at(-1)).toBe('idle');
    const failed = await cli(['--json', 'run', agentFile, '::outcome fail it did not work']);
    expect(failed.code).toBe(1);
    expect(events(failed.stdout).at(-1)).toMatchObject({ type: 'idle', data: { status: 'fail' } });
  });

  it('send with the same --input-id twice lands once', async () => {
    const thread = await newThread();
    const inputId = randomUUID();
    const first = JSON.parse(
      (await ok(['--json', 'send', thread, '::sh echo once', '--input-id', inputId])).stdout,
    );
    const again = JSON.parse(
      (await ok(['--json', 'send', thread, '::sh echo once', '--input-id', inputId])).stdout,
    );
    expect(first).toMatchObject({ input_id: inputId, replayed: false });
    expect(again).toMatchObject({ input_id: inputId, replayed: true });
    await ok(['watch', thread, '--until-idle']);
    const shown = JSON.parse((await ok(['--json', 'thread', thread])).stdout);
    expect(shown.thread.status).toBe('idle');
    expect(shown.messages.filter((m: { content: string }) => m.content === '::sh echo once')).toHaveLength(1);
    const human = await ok(['thread', thread]);
    expect(human.stdout).toContain('shell exited 0:\nonce');
  });

  it('stops a long turn', async () => {
    const thread = await newThread();
    await ok(['send', thread, '::sleep 60000']);
    await vi.waitFor(
      async () => {
        const page = (await (await server.request('GET', `/v2/threads/${thread}/events`)).json()) as {
          items: Event[];
        };
        expect(page.items.map((e) => e.type)).toContain('turn.started');
      },
      { timeout: 10_000, interval: 50 },
    );
    const stopped = await ok(['--json', 'stop', thread]);
    expect(JSON.parse(stopped.stdout)).toHaveProperty('id', thread);
    const watched = await ok(['--json', 'watch', thread, '--from-start', '--until-idle']);
    expect(events(watched.stdout)).toContainEqual(
      expect.objectContaining({ type: 'turn.ended', data: { stop_reason: 'cancelled' } }),
    );
  });

  it('watch resumes where the last one left off, repeating nothing', async () => {
    const thread = JSON.parse((await ok(['--json', 'run', '--no-follow', agentFile, '::sh echo w1'])).stdout)
      .thread_id as string;
    const first = events((await ok(['--json', 'watch', thread, '--until-idle'])).stdout);
    expect(first[0]!.seq).toBe(1);
    expect(first.at(-1)!.type).toBe('idle');
    // Nothing new: ends at once.
    expect((await ok(['--json', 'watch', thread, '--until-idle'])).stdout).toBe('');
    await ok(['send', thread, '::sh echo w2']);
    const second = events((await ok(['--json', 'watch', thread, '--until-idle'])).stdout);
    expect(second[0]).toMatchObject({ type: 'user.message', seq: first.at(-1)!.seq + 1 });
    expect(second.map((e) => e.seq)).toEqual(second.map((_, i) => first.at(-1)!.seq + 1 + i));
    const state = JSON.parse(await readFile(join(dir, 'config', 'paddock', 'watch.json'), 'utf8'));
    expect(state[`${server.url} ${thread}`]).toBe(second.at(-1)!.seq);
  });

  it('files put, ls, tree and get round-trip a file of several chunks', async () => {
    const thread = await newThread();
    const data = randomBytes(3 * MiB + 5);
    const local = join(dir, 'data.bin');
    await writeFile(local, data);
    const put = await ok([
      '--json',
      'files',
      'put',
      thread,
      local,
      'in/data.bin',
      '--chunk-size',
      String(MiB),
    ]);
    expect(JSON.parse(put.stdout)).toMatchObject({
      status: 'completed',
      path: 'in/data.bin',
      size_bytes: data.length,
    });
    const listed = JSON.parse((await ok(['--json', 'files', 'ls', thread, 'in'])).stdout);
    expect(listed.items).toContainEqual(expect.objectContaining({ name: 'data.bin', size: data.length }));
    expect((await ok(['files', 'ls', thread, 'in'])).stdout).toMatch(/data\.bin/);
    expect((await ok(['files', 'tree', thread])).stdout).toContain('└── data.bin');
    const copy = join(dir, 'copy.bin');
    await ok(['files', 'get', thread, 'in/data.bin', copy]);
    expect((await readFile(copy)).equals(data)).toBe(true);
    const piped = await new Promise<Buffer>((resolvePiped) => {
      const child = spawn(process.execPath, [bin, 'files', 'get', thread, 'in/data.bin', '-'], { env });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
      child.on('close', () => resolvePiped(Buffer.concat(chunks)));
    });
    expect(piped.equals(data)).toBe(true);
  });

  it('files put killed mid-way resumes the same transfer when run again', async () => {
    const thread = await newThread();
    const data = randomBytes(24 * MiB + 3);
    const local = join(dir, 'big.bin');
    await writeFile(local, data);
    const args = ['files', 'put', thread, local, 'big.bin', '--chunk-size', String(MiB)];
    const first = start(args);
    let killed: ChildProcess | undefined;
    first.child.stderr!.on('data', () => {
      const sent = [...first.ran.stderr.matchAll(/: (\d+) of \d+ bytes/g)].map((m) => Number(m[1]));
      if (!killed && sent.some((n) => n >= MiB)) {
        killed = first.child;
        first.child.kill('SIGKILL');
      }
    });
    const interrupted = await first.done;
    expect(interrupted.code).toBeNull(); // killed
    const storage = JSON.parse(await readFile(join(dir, 'config', 'paddock', 'uploads.json'), 'utf8'));
    const remembered = Object.values(storage) as { metadata: { transfer_id: string } }[];
    expect(remembered).toHaveLength(1);
    const transferId = remembered[0]!.metadata.transfer_id;
    const partial = (await (
      await server.request('GET', `/v2/tasks/${thread}/files/uploads/${transferId}`)
    ).json()) as { bytes_transferred: number };
    expect(partial.bytes_transferred).toBeGreaterThanOrEqual(MiB);
    expect(partial.bytes_transferred).toBeLessThan(data.length);

    const again = await ok(['--json', ...args]);
    expect(JSON.parse(again.stdout)).toMatchObject({
      id: transferId,
      status: 'completed',
      size_bytes: data.length,
    });
    const copy = join(dir, 'big-copy.bin');
    await ok(['files', 'get', thread, 'big.bin', copy]);
    expect((await readFile(copy)).equals(data)).toBe(true);
    expect(JSON.parse(await readFile(join(dir, 'config', 'paddock', 'uploads.json'), 'utf8'))).toEqual({});
  });

  it('a bad token: exit 1 with the service detail on stderr; bad usage: exit 2', async () => {
    const thread = await newThread();
    const bad = await cli(['files', 'ls', thread], { SERVICE_TOKEN: 'pdk_pat_nope' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('invalid or expired PAT');
    expect(bad.stdout).toBe('');
    const flagged = await cli(['--token', 'pdk_pat_nope', '--json', 'thread', thread]);
    expect(flagged.code).toBe(1);
    expect(flagged.stdout).toBe('');
    expect((await cli(['files', 'ls', thread], { SERVICE_TOKEN: undefined })).code).toBe(2);
    expect((await cli(['send', thread])).code).toBe(2);
    expect((await cli(['frobnicate'])).code).toBe(2);
    expect((await cli(['run', join(dir, 'missing.yaml'), 'hi'])).code).toBe(2);
  });

  it('lists threads newest first, a page at a time or all of them', async () => {
    const older = await newThread();
    const newer = await newThread();
    type Page = { items: { id: string }[]; next_cursor: string | null };
    const page = JSON.parse((await ok(['--json', 'threads', '--limit', '1'])).stdout) as Page;
    expect(page.items.map((t) => t.id)).toEqual([newer]);
    expect(page.next_cursor).toEqual(expect.any(String));
    const next = JSON.parse(
      (await ok(['--json', 'threads', '--limit', '1', '--cursor', page.next_cursor!])).stdout,
    ) as Page;
    expect(next.items.map((t) => t.id)).toEqual([older]);
    const all = JSON.parse((await ok(['--json', 'threads', '--all', '--limit', '1'])).stdout) as Page;
    expect(all.next_cursor).toBeNull();
    expect(all.items.slice(0, 2).map((t) => t.id)).toEqual([newer, older]);
    expect(new Set(all.items.map((t) => t.id)).size).toBe(all.items.length);
    expect((await ok(['threads', '--limit', '2'])).stdout).toContain(newer);
    expect((await cli(['threads', '--status', 'bogus'])).code).toBe(2);
  });

  it("adds, lists and removes an agent's schedules; the legacy control plane is refused before sending", async () => {
    const { agent_id: agent } = JSON.parse((await ok(['--json', 'run', agentFile])).stdout) as {
      agent_id: string;
    };
    const added = JSON.parse(
      (
        await ok([
          '--json',
          'schedule',
          'add',
          agent,
          'good morning',
          '--cron',
          '0 9 * * 1-5',
          '--time-zone',
          'Europe/Paris',
          '--name',
          'weekdays',
        ])
      ).stdout,
    );
    expect(added).toMatchObject({
      agent_id: agent,
      name: 'weekdays',
      time_zone: 'Europe/Paris',
      enabled: true,
    });
    const people = await ok(['schedule', 'list', agent]);
    expect(people.stdout).toContain('weekdays');
    expect(people.stdout).toContain('0 9 * * 1-5');
    const bad = await cli(['schedule', 'add', agent, 'x', '--cron', 'every day']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('five fields');
    expect((await cli(['schedule', 'add', agent, 'x'])).code).toBe(2); // --cron is required

    // Refused before sending: nothing reaches the service.
    const legacy = { PADDOCK_URL: undefined, SERVICE_API_URL: server.url };
    const refused = await cli(['schedule', 'add', agent, 'x', '--cron', '@daily'], legacy);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('refused before sending');
    expect((await cli(['schedule', 'remove', agent, 'weekdays'], legacy)).code).toBe(1);
    const listed = JSON.parse((await ok(['--json', 'schedule', 'list', agent])).stdout) as {
      items: { id: string }[];
    };
    expect(listed.items.map((s) => s.id)).toEqual([added.id]);

    expect(JSON.parse((await ok(['--json', 'schedule', 'remove', agent, 'weekdays'])).stdout)).toEqual({
      removed: added.id,
      name: 'weekdays',
    });
    expect((await cli(['schedule', 'remove', agent, 'weekdays'])).code).toBe(1);
    expect(JSON.parse((await ok(['--json', 'schedule', 'list', agent])).stdout)).toEqual({ items: [] });
  });

  it('SERVICE_API_URL names the service when PADDOCK_URL is not set (legacy control plane)', async () => {
    const thread = await newThread();
    const legacy = { PADDOCK_URL: undefined, SERVICE_API_URL: server.url };
    expect((await cli(['--json', 'files', 'ls', thread], legacy)).code).toBe(0);
    const config = JSON.parse((await cli(['--json', 'config'], legacy)).stdout);
    expect(config).toEqual({
      service_url: server.url,
      control_plane_url: `${server.url}/api/cli`,
      legacy: true,
      token_from: 'SERVICE_TOKEN',
    });
  });
});

describe('endpoints (D15)', () => {
  it('resolves the service and the control plane from flags and environment', () => {
    expect(resolveEndpoints({}, {})).toEqual({
      baseUrl: 'http://127.0.0.1:8787',
      controlPlaneUrl: 'http://127.0.0.1:8787/v2/cli',
      legacy: false,
    });
    expect(
      resolveEndpoints(
        {},
        { PADDOCK_URL: 'https://p.example/', SERVICE_CONTROL_PLANE_URL: 'https://cp.example' },
      ),
    ).toEqual({ baseUrl: 'https://p.example', controlPlaneUrl: 'https://cp.example/v2/cli', legacy: false });
    expect(
      resolveEndpoints({ url: 'http://a:1' }, { PADDOCK_URL: 'http://b:2', SERVICE_API_URL: 'http://old/' }),
    ).toEqual({
      baseUrl: 'http://a:1',
      controlPlaneUrl: 'http://old/api/cli',
      legacy: true,
    });
    expect(() => resolveEndpoints({}, { PADDOCK_URL: 'ftp://x' })).toThrow(/http/);
  });

  it('refuses the writes the legacy control plane does not take, before sending', () => {
    const legacy: Endpoints = resolveEndpoints({}, { SERVICE_API_URL: 'http://old' });
    for (const write of [
      'declarative_machine_kind',
      'declarative_default_model',
      'orchestration_create',
      'schedule_trigger',
    ] as const) {
      expect(() => refuseOnLegacy(legacy, write)).toThrow(/refused before sending/);
      expect(() => refuseOnLegacy(resolveEndpoints({}, {}), write)).not.toThrow();
    }
  });
});
