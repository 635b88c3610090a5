import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import {
  findDefaultTeamId,
  insertOrg,
  insertOrgMember,
  insertTeam,
  insertTeamMember,
  insertUser,
  quarantineThread,
} from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, allEvents, createIdleThread, eventSeen, json, settled } from './helpers.ts';

interface Entry {
  name: string;
  path: string;
  is_dir: boolean;
  size: number;
  mod_time: string;
  mode: string;
  permissions: string;
  owner: string;
  group: string;
}
interface Listing {
  path: string;
  items: Entry[];
}
interface TreeNode {
  name: string;
  path: string;
  is_dir: boolean;
  size: number;
  children: TreeNode[];
  truncated?: boolean;
}

const d3 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

/** What GNU `stat` says of a host file: what its entry must say (names, else numeric ids). */
function statOf(path: string) {
  const [mode, octal, owner, group, uid, gid] = execFileSync('stat', ['-c', '%A %a %U %G %u %g', path], {
    encoding: 'utf8',
  })
    .trim()
    .split(' ') as [string, string, string, string, string, string];
  return {
    mode,
    permissions: octal.padStart(4, '0'),
    owner: owner === 'UNKNOWN' ? uid : owner,
    group: group === 'UNKNOWN' ? gid : group,
  };
}

describe.each(testDatabases())('workspace files on $name', (database) => {
  let server: TestServer;
  /** An organization with a budget of one credit (created once the server runs). */
  const smallOrgId = randomUUID();

  beforeAll(async () => {
    server = await startTestServer(database, {
      PADDOCK_CREDIT_BUDGETS: JSON.stringify({ [smallOrgId]: 1 }),
      // The organization's use is summed again this often: the test does not wait out the default.
      PADDOCK_CREDIT_CACHE_MS: '200',
    });
  });
  afterAll(() => server.close());

  const get = (taskId: string, route: string, query: Record<string, string> = {}, token?: string) =>
    server.request('GET', `/v2/tasks/${taskId}/files${route}?${new URLSearchParams(query)}`, { token });
  const list = async (taskId: string, path?: string) =>
    json<Listing>(await get(taskId, '', path === undefined ? {} : { path }), 200);
  const tree = async (taskId: string, query: Record<string, string> = {}) =>
    json<TreeNode>(await get(taskId, '/tree', query), 200);
  const hostPath = (taskId: string, path: string) => join(server.dataDir, 'workspaces', taskId, path);

  /** The server as the holder of `token` calls it (the admin when none is given). */
  const as = (token?: string): Pick<TestServer, 'request'> => ({
    request: (method, path, options) => server.request(method, path, { token, ...options }),
  });

  /** A thread whose first turn ran these lines (scripted model), settled. */
  async function threadAfter(input: string, token?: string): Promise<string> {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input }, token }),
      201,
    );
    await settled(as(token), thread_id);
    return thread_id;
  }

  async function expectError(response: Response, status: number, code: string): Promise<void> {
    expect(await json(response, status)).toEqual({ detail: { code, message: expect.any(String) } });
  }

  it('lists what a turn wrote, as file entries relative to /workspace', async () => {
    const taskId = await threadAfter('::sh mkdir -p src && echo hi > src/a.txt');
    const root = await list(taskId);
    expect(root.path).toBe('.');
    const src = root.items.find((i) => i.name === 'src')!;
    expect(src).toMatchObject({ path: 'src', is_dir: true });
    expect(src).toMatchObject(statOf(hostPath(taskId, 'src')));

    const listing = await list(taskId, 'src');
    expect(listing.path).toBe('src');
    const hostFile = statSync(hostPath(taskId, 'src/a.txt'));
    expect(listing.items).toEqual([
      {
        name: 'a.txt',
        path: 'src/a.txt',
        is_dir: false,
        size: 3,
        mod_time: expect.stringMatching(d3),
        ...statOf(hostPath(taskId, 'src/a.txt')),
      },
    ]);
    expect(listing.items[0]!.mod_time.slice(0, 19)).toBe(hostFile.mtime.toISOString().slice(0, 19));
    // The same directory named by its path inside the sandbox; a file lists as its own entry.
    expect(await list(taskId, '/workspace/src')).toEqual(listing);
    expect(await list(taskId, 'src/a.txt')).toEqual({ ...listing, path: 'src/a.txt' });
    expect(await list(taskId, '/workspace')).toEqual(root);
  });

  it('walks a tree breadth first within max_depth and max_entries, and says when it cut', async () => {
    const taskId = await threadAfter('::sh mkdir -p a/b/c && touch a/b/c/deep.txt a/top.txt z1 z2');
    const full = await tree(taskId, { max_depth: '10' });
    const paths = (node: TreeNode): string[] => [node.path, ...node.children.flatMap(paths)];
    expect(full).toMatchObject({ name: 'workspace', path: '.', is_dir: true, truncated: false });
    expect(paths(full)).toEqual(['.', 'a', 'a/b', 'a/b/c', 'a/b/c/deep.txt', 'a/top.txt', 'z1', 'z2']);
    const deep = full.children[0]!.children[0]!.children[0]!.children[0]!;
    expect(deep).toEqual({ name: 'deep.txt', path: 'a/b/c/deep.txt', is_dir: false, size: 0, children: [] });

    // The default depth (3) shows a/b/c without its file, and says so.
    const byDefault = await tree(taskId);
    expect(paths(byDefault)).toEqual(['.', 'a', 'a/b', 'a/b/c', 'a/top.txt', 'z1', 'z2']);
    expect(byDefault.truncated).toBe(true);
    expect(paths(await tree(taskId, { max_depth: '1' }))).toEqual(['.', 'a', 'z1', 'z2']);
    // Breadth first: the root's own entries come before anything deeper.
    const cut = await tree(taskId, { max_depth: '10', max_entries: '4' });
    expect(paths(cut)).toEqual(['.', 'a', 'a/b', 'z1', 'z2']);
    expect(cut.truncated).toBe(true);
    expect((await tree(taskId, { max_depth: '10', max_entries: '7' })).truncated).toBe(false);
    // A subtree: its root is the directory named.
    const sub = await tree(taskId, { path: 'a/b', max_depth: '10' });
    expect(sub).toMatchObject({ name: 'b', path: 'a/b', truncated: false });
    expect(paths(sub)).toEqual(['a/b', 'a/b/c', 'a/b/c/deep.txt']);
    expect(await tree(taskId, { path: 'z1' })).toEqual({
      name: 'z1',
      path: 'z1',
      is_dir: false,
      size: 0,
      children: [],
      truncated: false,
    });

    const tooFar: Record<string, string>[] = [
      { max_depth: '21' },
      { max_depth: '0' },
      { max_entries: '10001' },
      { max_entries: 'x' },
    ];
    for (const query of tooFar) {
      const refused = await get(taskId, '/tree', query);
      const detail = (await json<{ detail: { loc: string[] }[] }>(refused, 422)).detail;
      expect(detail[0]!.loc).toEqual(['query', Object.keys(query)[0]]);
    }
  });

  it('downloads a file: its bytes, Content-Length and a content type by extension', async () => {
    const taskId = await threadAfter(
      [
        "::sh printf '# Notes\\nline two\\n' > notes.md",
        '::sh head -c 200000 /dev/urandom > blob.bin && touch empty.json && mkdir dir',
      ].join('\n'),
    );
    for (const [path, type] of [
      ['notes.md', 'text/markdown'],
      ['blob.bin', 'application/octet-stream'],
      ['empty.json', 'application/json'],
    ] as const) {
      const response = await get(taskId, '/content', { path });
      expect(response.status).toBe(200);
      const bytes = Buffer.from(await response.arrayBuffer());
      const expected = readFileSync(hostPath(taskId, path));
      expect(bytes.equals(expected), path).toBe(true);
      expect(response.headers.get('content-length')).toBe(String(expected.length));
      expect(response.headers.get('content-type')).toBe(type);
      expect(response.headers.get('content-disposition')).toBe(`attachment; filename*=UTF-8''${path}`);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect(readFileSync(hostPath(taskId, 'blob.bin')).length).toBe(200000);
    expect((await get(taskId, '/content', { path: '/workspace/notes.md' })).status).toBe(200);
    await expectError(await get(taskId, '/content', { path: 'dir' }), 400, 'not_a_file');
    await expectError(await get(taskId, '/content', {}), 400, 'not_a_file');
  });

  it('refuses paths that lead out of the workspace (400 invalid_path) and answers 404 path_not_found for missing ones; the task does not change', async () => {
    const taskId = await threadAfter(
      '::sh mkdir -p src && echo hi > src/a.txt && ln -s /etc etc-link && ln -s src/a.txt inner-link',
    );
    const { db } = server.paddock.services.store;
    const threadRow = () => db.selectFrom('threads').selectAll().where('id', '=', taskId).executeTakeFirst();
    const before = { row: await threadRow(), events: await allEvents(server, taskId) };

    // A symlink out is an entry, never followed.
    const link = (await list(taskId)).items.find((i) => i.name === 'etc-link')!;
    expect(link).toMatchObject({ path: 'etc-link', is_dir: false });
    expect(link.mode).toMatch(/^l/);
    const walked = await tree(taskId, { max_depth: '20' });
    expect(walked.children.find((c) => c.name === 'etc-link')).toMatchObject({ is_dir: false, children: [] });
    expect(JSON.stringify(walked)).not.toContain('passwd');
    // A symlink inside the workspace leads where it points.
    expect(await (await get(taskId, '/content', { path: 'inner-link' })).text()).toBe('hi\n');

    const outside = [
      'etc-link',
      'etc-link/passwd',
      '..',
      '../../etc/passwd',
      'src/../../x',
      '/etc/passwd',
      '/workspace/../etc/passwd',
      '/workspacex',
      hostPath(taskId, 'src/a.txt'),
      'src/a.txt\0.png',
    ];
    for (const path of outside) {
      for (const route of ['', '/tree', '/content']) {
        await expectError(await get(taskId, route, { path }), 400, 'invalid_path');
      }
    }
    for (const path of ['nope', 'src/nope.txt', '/workspace/nope', 'src/a.txt/below']) {
      for (const route of ['', '/tree', '/content']) {
        await expectError(await get(taskId, route, { path }), 404, 'path_not_found');
      }
    }

    expect(await threadRow()).toEqual(before.row);
    expect(await allEvents(server, taskId)).toEqual(before.events);
  });

  it('needs only a credential that reaches the task: a read-only token reads, another thread’s token gets 404', async () => {
    const taskId = await threadAfter('::sh echo hi > a.txt');
    const otherId = await createIdleThread(server);
    const { db } = server.paddock.services.store;
    const admin = (await db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirst())!;
    const readOnly = await mintToken(db, { kind: 'pat', userId: admin.id, name: 'ro', scopes: ['read'] });
    const otherThread = await mintToken(db, {
      kind: 'thread',
      userId: admin.id,
      name: 'other',
      scopes: ['read', 'publish'],
      threadId: otherId,
    });
    for (const route of ['', '/tree']) {
      expect((await get(taskId, route, {}, readOnly.token)).status).toBe(200);
      expect(await json(await get(taskId, route, {}, otherThread.token), 404)).toEqual({
        detail: 'Task not found',
      });
    }
    expect(await json(await get(randomUUID(), ''), 404)).toEqual({ detail: 'Task not found' });
  });

  it('reads a workspace no boot has made as empty', async () => {
    const taskId = await createIdleThread(server);
    expect(await list(taskId)).toEqual({ path: '.', items: [] });
    expect(await tree(taskId)).toEqual({
      name: 'workspace',
      path: '.',
      is_dir: true,
      size: 0,
      children: [],
      truncated: false,
    });
    await expectError(await get(taskId, '', { path: 'src' }), 404, 'path_not_found');
    await expectError(await get(taskId, '/content', { path: 'a.txt' }), 404, 'path_not_found');
    await expectError(await get(taskId, '', { path: '../x' }), 400, 'invalid_path');
  });

  it('answers 409 machine_not_ready with Retry-After while the first boot runs the entrypoint', async () => {
    const { thread_id: taskId } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ entrypoint: 'sleep 2; echo booted > boot.txt' }), input: 'hello' },
      }),
      201,
    );
    await eventSeen(server, taskId, 'sandbox.status');
    for (const route of ['', '/tree', '/content']) {
      const refused = await get(taskId, route, { path: route === '/content' ? 'boot.txt' : '.' });
      await expectError(refused, 409, 'machine_not_ready');
      expect(refused.headers.get('retry-after')).toBe('1');
    }
    await settled(server, taskId);
    expect((await list(taskId)).items.map((i) => i.name)).toContain('boot.txt');
  });

  it('answers 409 task_terminal_no_machine (no Retry-After) for a retired task; a quarantined one still reads', async () => {
    const retired = await threadAfter('::sh echo hi > a.txt');
    const quarantined = await threadAfter('::sh echo hi > a.txt');
    const { db } = server.paddock.services.store;
    await quarantineThread(db, retired, { state: 'retired', replacementTaskId: null });
    await quarantineThread(db, quarantined, { state: 'quarantined', replacementTaskId: null });
    for (const route of ['', '/tree', '/content']) {
      const refused = await get(retired, route, { path: 'a.txt' });
      await expectError(refused, 409, 'task_terminal_no_machine');
      expect(refused.headers.get('retry-after')).toBeNull();
      expect((await get(quarantined, route, { path: 'a.txt' })).status).toBe(200);
    }
  });

  it('answers 402 credits_exhausted, with only code and message, once the organization used its credits', async () => {
    // An organization with a budget of one credit, and a member whose only team is in it.
    const { db } = server.paddock.services.store;
    const at = timestamp();
    const userId = newId();
    const teamId = newId();
    await insertUser(db, {
      id: userId,
      username: `payer-${userId}`,
      password_hash: null,
      issuer: null,
      subject: null,
      created_at: at,
    });
    await insertOrg(db, { id: smallOrgId, name: 'small', created_at: at });
    await insertOrgMember(db, { org_id: smallOrgId, user_id: userId, role: 'owner', created_at: at });
    await insertTeam(db, { id: teamId, org_id: smallOrgId, name: 'small', created_at: at });
    await insertTeamMember(db, { team_id: teamId, user_id: userId, role: 'owner', created_at: at });
    expect(await findDefaultTeamId(db, userId)).toBe(teamId);
    const { token } = await mintToken(db, {
      kind: 'pat',
      userId,
      name: 'payer',
      scopes: ['read', 'publish'],
    });

    // No model tokens used yet: the organization is under its budget.
    const idle = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() }, token }),
      201,
    );
    expect((await get(idle.thread_id, '', {}, token)).status).toBe(200);

    // One turn records usage (model tokens) beyond the budget; once the cached sum lapses the
    // gate refuses every task of the organization.
    const taskId = await threadAfter('hello', token);
    const usage = (await allEvents(as(token), taskId)).filter((e) => e.type === 'usage');
    expect(usage.length).toBeGreaterThan(0);
    const refused = await vi.waitFor(
      async () => {
        const response = await get(taskId, '', {}, token);
        expect(response.status).not.toBe(200);
        return response;
      },
      { timeout: 10_000, interval: 50 },
    );
    for (const [id, route] of [
      [taskId, ''],
      [taskId, '/tree'],
      [taskId, '/content'],
      [idle.thread_id, ''],
    ] as const) {
      const response = route === '' && id === taskId ? refused : await get(id, route, { path: '.' }, token);
      expect(await json(response, 402)).toEqual({
        detail: { code: 'credits_exhausted', message: expect.any(String) },
      });
    }
    // Organizations without a budget are unlimited.
    expect((await get(await createIdleThread(server), '')).status).toBe(200);
  });
});

describe.each(testDatabases())('workspace files while turns wait on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_MAX_CONCURRENT_TURNS: '1' });
  });
  afterAll(() => server.close());

  it('answers 409 machine_not_ready while a queued first turn has not made the workspace yet', async () => {
    const busy = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(), input: '::sleep 2500' } }),
      201,
    );
    await eventSeen(server, busy.thread_id, 'turn.started');
    const waiting = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec(), input: '::sh echo hi > a.txt' },
      }),
      201,
    );
    const refused = await server.request('GET', `/v2/tasks/${waiting.thread_id}/files`);
    expect(await json(refused, 409)).toEqual({
      detail: { code: 'machine_not_ready', message: expect.any(String) },
    });
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await allEvents(server, waiting.thread_id)).some((e) => e.type === 'turn.started')).toBe(false);

    await settled(server, waiting.thread_id);
    const listing = await json<Listing>(
      await server.request('GET', `/v2/tasks/${waiting.thread_id}/files`),
      200,
    );
    expect(listing.items.map((i) => i.name)).toEqual(['a.txt']);
  });
});
