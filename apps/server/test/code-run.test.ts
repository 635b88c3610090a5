import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentSpec,
  allEvents,
  createIdleThread,
  json,
  sandboxToken,
  settled,
  transcript,
  turnStarted,
} from './helpers.ts';

interface CodeRun {
  exit_code: number;
  stdout: string;
  stderr: string;
  duration_ms: number;
  timed_out: boolean;
  truncated: boolean;
}
interface Capabilities {
  languages: { language: string; available: boolean; version: string | null; reason?: string }[];
  limits: { default_timeout_ms: number; max_timeout_ms: number; max_output_bytes: number };
}

describe.each(testDatabases())('code runs on $name', (database) => {
  let server: TestServer;
  /** A thread whose sandbox runs, and its sandbox credential. */
  let threadId: string;
  let token: string;

  beforeAll(async () => {
    server = await startTestServer(database);
    threadId = await createIdleThread(server);
    token = await sandboxToken(server, threadId);
  });
  afterAll(() => server.close());

  const workspace = (id: string) => join(server.dataDir, 'workspaces', id);

  const run = (body: unknown, options: { task?: string; as?: string } = {}) =>
    server.request('POST', `/v2/tasks/${options.task ?? threadId}/code/run/sync`, {
      body,
      token: options.as ?? token,
    });
  const ran = async (body: unknown, options: { task?: string; as?: string } = {}) =>
    json<CodeRun>(await run(body, options), 200);

  it('runs bash, python3 and node with their exit codes, stdout and stderr', async () => {
    expect(await ran({ language: 'bash', code: 'echo out; echo err >&2; exit 3' })).toEqual({
      exit_code: 3,
      stdout: 'out\n',
      stderr: 'err\n',
      duration_ms: expect.any(Number),
      timed_out: false,
      truncated: false,
    });
    const python = await ran({
      language: 'python3',
      code: 'import sys\nprint("py", sys.version_info[0])\nsys.stderr.write("warned\\n")\nsys.exit(4)',
    });
    expect(python).toMatchObject({ exit_code: 4, stdout: 'py 3\n', stderr: 'warned\n', timed_out: false });
    const node = await ran({
      language: 'node',
      code: 'console.log(process.versions.node); console.error("noted"); process.exitCode = 5;',
    });
    // The sandbox's node is the project's pinned one, whatever `node` the system has.
    expect(node).toMatchObject({ exit_code: 5, stdout: `${process.versions.node}\n`, stderr: 'noted\n' });
    const esm = await ran({
      language: 'node',
      code: 'import { join } from "node:path";\nconsole.log(join("a", "b"), await Promise.resolve(7));',
    });
    expect(esm).toMatchObject({ exit_code: 0, stdout: 'a/b 7\n' });
  });

  it("runs as the agent's tools do: same workspace, environment and user, in both directions", async () => {
    await writeFile(join(workspace(threadId), 'host.txt'), 'from the host\n');
    const inside = await ran({
      language: 'bash',
      code: 'cat host.txt; echo "$PADDOCK_THREAD_ID"; [ "$PWD" = "$PADDOCK_WORKSPACE" ] && echo at-workspace; id -u > code-uid.txt; echo from-code > code.txt',
    });
    expect(inside).toMatchObject({ exit_code: 0, stdout: `from the host\n${threadId}\nat-workspace\n` });
    expect(await readFile(join(workspace(threadId), 'code.txt'), 'utf8')).toBe('from-code\n');

    // The agent sees what the code wrote, and the code what the agent wrote.
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: {
          input_id: randomUUID(),
          messages: [{ content: '::sh cat code.txt; id -u > agent-uid.txt; echo agent-wrote > agent.txt' }],
        },
      }),
      201,
    );
    await settled(server, threadId);
    expect((await transcript(server, threadId)).join('\n')).toContain('from-code');
    const python = await ran({
      language: 'python3',
      code: 'print(open("agent.txt").read().strip(), open("agent-uid.txt").read() == open("code-uid.txt").read())',
    });
    expect(python).toMatchObject({ exit_code: 0, stdout: 'agent-wrote True\n' });
  });

  it('kills the whole process group on timeout, background children included', async () => {
    const started = Date.now();
    const result = await ran({
      language: 'bash',
      code: 'echo started; (sleep 1.5; echo late > late.txt) & sleep 100.5 & sleep 100.5',
      timeout_ms: 1000,
    });
    expect(result).toMatchObject({ exit_code: 124, stdout: 'started\n', timed_out: true });
    // Node's timers may fire a millisecond early against the clock the duration is measured with.
    expect(result.duration_ms).toBeGreaterThanOrEqual(990);
    expect(Date.now() - started).toBeLessThan(10_000);
    // Past the moment the background child would have written, had it outlived the timeout.
    await sleep(1000);
    expect(existsSync(join(workspace(threadId), 'late.txt'))).toBe(false);
    const left = await ran({ language: 'bash', code: "pgrep -fc 'sleep 100[.]5'" });
    expect(left).toMatchObject({ exit_code: 1, stdout: '0\n' });
  });

  it('caps each stream, keeping its end, and says so', async () => {
    const result = await ran({
      language: 'bash',
      code: "head -c 3000000 /dev/zero | tr '\\0' a; printf END; echo small >&2",
    });
    expect(result.truncated).toBe(true);
    expect(result.stdout).toHaveLength(1024 * 1024);
    expect(result.stdout.endsWith('aaaEND')).toBe(true);
    expect(result.stderr).toBe('small\n');
    expect(
      (await ran({ language: 'python3', code: 'print("x" * 1000)' })).truncated,
      'a run under the cap',
    ).toBe(false);
  });

  it('reports the languages the sandbox has, with versions and the bounds of a run', async () => {
    const answer = await server.request('GET', `/v2/tasks/${threadId}/code/capabilities`, { token });
    const capabilities = await json<Capabilities>(answer, 200);
    expect(capabilities.languages).toEqual([
      { language: 'bash', available: true, version: expect.stringMatching(/^\d+\.\d+/) },
      { language: 'python3', available: true, version: expect.stringMatching(/^3\.\d+\.\d+/) },
      { language: 'node', available: true, version: process.versions.node },
    ]);
    expect(capabilities.limits).toEqual({
      default_timeout_ms: 30_000,
      max_timeout_ms: 300_000,
      max_output_bytes: 1024 * 1024,
    });
  });

  it('reports a language whose binary is missing as unavailable, and a run of it exits 127', async () => {
    // A PATH secret overrides the sandbox's: bash and python3 are not found; node has a fixed path.
    const { thread_id: id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ secrets: { PATH: '/nowhere' } }) },
      }),
      201,
    );
    // A user token with code:execute: a thread token minted here would be revoked by the boot,
    // which keeps only the sandbox's own one (issue 10 §4, no cache to outlive it).
    const bound = await mintUserToken(['read', 'publish', 'code:execute']);
    const capabilities = await json<Capabilities>(
      await server.request('GET', `/v2/tasks/${id}/code/capabilities`, { token: bound }),
      200,
    );
    expect(capabilities.languages).toEqual([
      { language: 'bash', available: false, version: null, reason: expect.stringContaining('ENOENT') },
      { language: 'python3', available: false, version: null, reason: expect.stringContaining('ENOENT') },
      { language: 'node', available: true, version: process.versions.node },
    ]);
    const missing = await ran({ language: 'python3', code: 'print(1)' }, { task: id, as: bound });
    expect(missing).toMatchObject({ exit_code: 127, stdout: '', stderr: expect.stringContaining('python3') });
  });

  it('needs code:execute besides publish, for the run and for the capabilities; a refusal boots nothing', async () => {
    const idle = await createIdleThread(server);
    // The admin's bootstrap token has read, publish and admin, which users can mint; not code:execute.
    for (const [method, path, body] of [
      ['POST', `/v2/tasks/${idle}/code/run/sync`, { language: 'bash', code: 'touch x' }],
      ['GET', `/v2/tasks/${idle}/code/capabilities`, undefined],
    ] as const) {
      expect(await json(await server.request(method, path, { body }), 403)).toEqual({
        detail: 'PAT lacks required scope: code:execute',
      });
    }
    const readOnly = await mintUserToken(['read', 'code:execute']);
    expect(
      await json(await run({ language: 'bash', code: 'touch x' }, { task: idle, as: readOnly }), 403),
    ).toEqual({
      detail: 'PAT lacks required scope: publish',
    });
    expect(existsSync(workspace(idle))).toBe(false);
    // A sandbox credential reaches its own task only.
    expect(await json(await run({ language: 'bash', code: 'true' }, { task: idle }), 404)).toEqual({
      detail: 'Task not found',
    });
    expect(
      await json(
        await server.request('POST', `/v2/tasks/${randomUUID()}/code/run/sync`, {
          body: { language: 'bash', code: 'true' },
          token,
        }),
        404,
      ),
    ).toEqual({ detail: 'Task not found' });
  });

  it('gives sandbox credentials messages:write_roles too: the agent may append an assistant message', async () => {
    const appended = await json<{ messages: { role: string }[] }>(
      await server.request('POST', `/v2/threads/${threadId}/messages`, {
        token,
        body: { messages: [{ role: 'assistant', content: 'noted by the agent' }] },
      }),
      201,
    );
    expect(appended.messages.map((m) => m.role)).toEqual(['assistant']);
  });

  it('answers 422 for a bad body', async () => {
    const bad = [
      [{ language: 'ruby', code: 'puts 1' }, ['body', 'language']],
      [{ language: 'bash' }, ['body', 'code']],
      [{ language: 'bash', code: '' }, ['body', 'code']],
      [{ language: 'bash', code: 'true', timeout_ms: 0 }, ['body', 'timeout_ms']],
      [{ language: 'bash', code: 'true', timeout_ms: 300_001 }, ['body', 'timeout_ms']],
      [{ language: 'bash', code: 'true', timeout_ms: 1.5 }, ['body', 'timeout_ms']],
      [{ language: 'bash', code: 'true', stdin: 'x' }, ['body', 'stdin']],
    ] as const;
    for (const [body, loc] of bad) {
      const detail = (await json<{ detail: { loc: unknown[] }[] }>(await run(body), 422)).detail;
      expect(
        detail.map((d) => d.loc),
        JSON.stringify(body),
      ).toContainEqual(loc);
    }
  });

  it('boots a sandbox that is not running, without a turn or events; the entrypoint runs on that first boot', async () => {
    const { thread_id: id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ entrypoint: 'echo booted > boot.txt' }) },
      }),
      201,
    );
    expect(existsSync(workspace(id))).toBe(false);
    const bound = await mintSandboxLikeToken(id);
    const result = await ran(
      { language: 'bash', code: 'cat boot.txt; echo -n "$PADDOCK_TOKEN"' },
      {
        task: id,
        as: bound,
      },
    );
    expect(result.exit_code).toBe(0);
    const [boot, ownToken] = result.stdout.split('\n');
    expect(boot).toBe('booted');
    // The boot minted the sandbox its own credential, with code:execute.
    expect(ownToken).toMatch(/^pdk_thr_/);
    await json(await server.request('GET', `/v2/tasks/${id}/code/capabilities`, { token: ownToken }), 200);
    expect(await allEvents(server, id)).toEqual([]);
    expect(
      await json<{ status: string }>(await server.request('GET', `/v2/threads/${id}`), 200),
    ).toMatchObject({ status: 'idle' });
    const turns = await server.paddock.services.store.db
      .selectFrom('turns')
      .select('id')
      .where('thread_id', '=', id)
      .execute();
    expect(turns).toEqual([]);
  });

  it('runs beside a running turn and leaves its events alone', async () => {
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: '::sh sleep 3; echo turn-done' }] },
      }),
      201,
    );
    await turnStarted(server, threadId);
    const before = (await allEvents(server, threadId)).length;
    const started = Date.now();
    expect(await ran({ language: 'node', code: 'console.log("beside")' })).toMatchObject({
      exit_code: 0,
      stdout: 'beside\n',
    });
    expect(Date.now() - started).toBeLessThan(2500);
    expect(
      await json<{ status: string }>(await server.request('GET', `/v2/threads/${threadId}`), 200),
    ).toMatchObject({ status: 'running' });
    await settled(server, threadId);
    const events = await allEvents(server, threadId);
    expect(events.slice(before).some((e) => JSON.stringify(e.data).includes('beside'))).toBe(false);
    expect(JSON.stringify(events.at(-1))).toContain('idle');
  });

  async function adminId(): Promise<string> {
    const admin = await server.paddock.services.store.db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    return admin.id;
  }

  async function mintUserToken(scopes: ('read' | 'publish' | 'code:execute')[]): Promise<string> {
    const minted = await mintToken(server.paddock.services.store.db, {
      kind: 'pat',
      userId: await adminId(),
      name: 'test',
      scopes,
    });
    return minted.token;
  }

  /** A credential like the one a sandbox gets, for a thread whose sandbox never booted. */
  async function mintSandboxLikeToken(id: string): Promise<string> {
    const minted = await mintToken(server.paddock.services.store.db, {
      kind: 'thread',
      userId: await adminId(),
      name: 'test',
      scopes: ['read', 'publish', 'code:execute'],
      threadId: id,
    });
    return minted.token;
  }
});
