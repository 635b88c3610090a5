import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { mintToken } from '@paddock/core';
import { testDatabases } from '@paddock/testing';
import { listThreadsForTest, startInjectedServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminTokenWith, agentSpec, json } from './helpers.ts';

const run = promisify(execFile);
const require = createRequire(import.meta.url);

describe.each(testDatabases())('bad input and credentials on $name', (database) => {
  let server: TestServer;
  let readToken: string;
  let adminOnlyToken: string;
  const missing = '0190a0a0-0000-7000-8000-000000000000';

  beforeAll(async () => {
    server = await startInjectedServer(database);
    readToken = await adminTokenWith(server, ['read']);
    adminOnlyToken = await adminTokenWith(server, ['admin']);
  });
  afterAll(() => server.close());

  async function threadCount(): Promise<number> {
    return (await listThreadsForTest(server)).length;
  }

  it('refuses a request without a token, and one with a bad token', async () => {
    const refused = await server.request('GET', `/v2/threads/${missing}`, { token: null });
    expect(refused.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const none = await json(refused, 401);
    expect(none).toEqual({ detail: 'missing bearer token' });
    const bad = await json(
      await server.request('GET', `/v2/threads/${missing}`, { token: 'pdk_pat_nope' }),
      401,
    );
    expect(bad).toEqual({ detail: 'invalid or expired PAT' });
  });

  it('refuses writes from read-only and admin-only tokens and changes nothing', async () => {
    const before = await threadCount();
    for (const token of [readToken, adminOnlyToken]) {
      const body = await json(
        await server.request('POST', '/v2/threads', { token, body: { agent: agentSpec(), input: 'hi' } }),
        403,
      );
      expect(body).toEqual({ detail: 'PAT lacks required scope: publish' });
    }
    expect(await threadCount()).toBe(before);
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        token: readToken,
        body: { messages: [{ content: 'x' }] },
      }),
      403,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/interrupt`, { token: readToken, body: {} }),
      403,
    );
    const transcript = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`, { token: readToken }),
      200,
    );
    expect(transcript.items).toEqual([]);
  });

  it('answers 422 with an array of {loc, msg, type} for unknown and malformed fields', async () => {
    const before = await threadCount();
    const unknown = await json<{ detail: { loc: unknown[]; msg: string; type: string }[] }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ colour: 'red' }), input: 'x' },
      }),
      422,
    );
    expect(unknown.detail).toContainEqual(expect.objectContaining({ loc: ['body', 'agent', 'colour'] }));
    const cases: unknown[] = [
      { agent: agentSpec({ harness: 'coding_omega' }) },
      { agent: agentSpec({ machine_kind: 'sandbox_z' }) },
      { agent: agentSpec({ secrets: { 'BAD-NAME': 'x' } }) },
      { agent: agentSpec({ instructions: 42 }) },
      { agent: agentSpec(), input: 'x', messages: [{ content: 'y' }] },
      { input: 'no agent' },
      { agent: agentSpec(), messages: [] },
      { agent: agentSpec(), extra: true },
    ];
    for (const body of cases) {
      const answer = await json<{ detail: { loc: unknown[]; msg: string; type: string }[] }>(
        await server.request('POST', '/v2/threads', { body }),
        422,
      );
      expect(Array.isArray(answer.detail), JSON.stringify(body)).toBe(true);
      expect(answer.detail[0]).toEqual({
        loc: expect.any(Array),
        msg: expect.any(String),
        type: expect.any(String),
      });
    }
    await json(await server.request('POST', '/v2/threads', { body: 'not json', headers: {} }), 422);
    expect(await threadCount()).toBe(before);
  });

  it('answers the provider rules of D4 at agent create', async () => {
    const disabled = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: 'sandbox_b' }) },
      }),
      503,
    );
    expect(disabled.detail.code).toBe('provider_disabled');
    const runtime = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ machine_kind: 'sandbox_c', harness: 'knowledge_cloud' }) },
      }),
      422,
    );
    expect(runtime.detail.code).toBe('runtime_not_supported');
  });

  it('answers 404 for a missing agent, thread and task, and for an unrouted path', async () => {
    expect(
      await json(
        await server.request('POST', '/v2/threads', { body: { agent_id: missing, input: 'x' } }),
        404,
      ),
    ).toEqual({ detail: 'Agent not found' });
    expect(await json(await server.request('GET', `/v2/threads/${missing}`), 404)).toEqual({
      detail: 'Thread not found',
    });
    expect(await json(await server.request('GET', `/v2/threads/${missing}/messages`), 404)).toEqual({
      detail: 'Thread not found',
    });
    expect(await json(await server.request('GET', `/v2/tasks/${missing}/events`), 404)).toEqual({
      detail: 'Task not found',
    });
    expect(await json(await server.request('GET', '/v2/nothing/here'), 404)).toEqual({ detail: 'Not Found' });
    expect(await json(await server.request('GET', '/v2/threads/not-a-uuid'), 422)).toMatchObject({
      detail: [{ loc: ['params', 'thread_id'] }],
    });
  });

  it('refuses an empty message list and an oversized body', async () => {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, { body: { messages: [] } }),
      422,
    );
    await json(
      await server.request('POST', `/v2/threads/${thread_id}/messages`, {
        body: { messages: [{ content: '' }] },
      }),
      422,
    );
    const huge = 'x'.repeat(5 * 1024 * 1024);
    const tooBig = await server.request('POST', `/v2/threads/${thread_id}/messages`, {
      body: { messages: [{ content: huge }] },
    });
    expect(tooBig.status).toBe(413);
    expect(await tooBig.json()).toEqual({ detail: expect.any(String) });
    const transcript = await json<{ items: unknown[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`),
      200,
    );
    expect(transcript.items).toEqual([]);
  });

  it('keeps a thread-bound token to its own thread', async () => {
    const a = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const b = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    const { store } = server.paddock.services;
    const thread = await store.db
      .selectFrom('threads')
      .select(['owner_user_id', 'agent_id'])
      .where('id', '=', a.thread_id)
      .executeTakeFirstOrThrow();
    const bound = await mintToken(store.db, {
      kind: 'thread',
      userId: thread.owner_user_id,
      name: 't',
      scopes: ['read', 'publish'],
      threadId: a.thread_id,
    });
    await json(await server.request('GET', `/v2/threads/${a.thread_id}`, { token: bound.token }), 200);
    expect(
      await json(await server.request('GET', `/v2/threads/${b.thread_id}`, { token: bound.token }), 404),
    ).toEqual({
      detail: 'Thread not found',
    });
    const roles = await json<{ detail: string }>(
      await server.request('POST', `/v2/threads/${a.thread_id}/messages`, {
        token: bound.token,
        body: { messages: [{ role: 'assistant', content: 'pretend' }] },
      }),
      403,
    );
    expect(roles.detail).toContain('messages:write_roles');
    const before = await threadCount();
    const fanOut = await json<{ detail: { code: string } }>(
      await server.request('POST', '/v2/threads', {
        token: bound.token,
        body: { agent_id: thread.agent_id, input: 'x' },
      }),
      403,
    );
    expect(fanOut.detail.code).toBe('forbidden');
    expect(await threadCount()).toBe(before);
  });

  it('answers 503 with Retry-After when credentials cannot be looked up', async () => {
    const broken = await startInjectedServer(database);
    const fresh = await adminTokenWith(broken, ['read']);
    // The fault: the database goes away under a running server.
    await broken.paddock.services.store.db.destroy();
    const answer = await broken.request('GET', `/v2/threads/${missing}`, { token: fresh });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('2');
    expect(await answer.json()).toEqual({ detail: 'authorization temporarily unavailable' });
    await broken.close().catch(() => {});
  });

  it('answers a Stop whose database fails with 503 turn_interrupt_unconfirmed and Retry-After 1', async () => {
    const broken = await startInjectedServer(database);
    const { thread_id } = await json<{ thread_id: string }>(
      await broken.request('POST', '/v2/threads', { body: { agent: agentSpec() } }),
      201,
    );
    // The credential still resolves (every request reads it); the fault is the database failing as
    // the Stop writes.
    const { store } = broken.paddock.services;
    (store as { transaction: typeof store.transaction }).transaction = () =>
      Promise.reject(new Error('Connection terminated unexpectedly'));
    const answer = await broken.request('POST', `/v2/tasks/${thread_id}/interrupt`, {
      body: { expected_generation: 0 },
    });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('1');
    expect(await answer.json()).toEqual({
      detail: { code: 'turn_interrupt_unconfirmed', message: expect.any(String) },
    });
    // A fault that is not the database's is not passed off as an unconfirmed Stop: a 500.
    (store as { transaction: typeof store.transaction }).transaction = () =>
      Promise.reject(new TypeError("Cannot read properties of undefined (reading 'interruptOrphan')"));
    const fault = await broken.request('POST', `/v2/tasks/${thread_id}/interrupt`, {
      body: { expected_generation: 0 },
    });
    expect([fault.status, await fault.json()]).toEqual([500, { detail: 'Internal Server Error' }]);
    await broken.close().catch(() => {});
  });

  it('documents every route it serves, and the document passes the Redocly recommended rules', async () => {
    const doc = await openApiDocument();
    const documented = new Set(operations(doc).map(({ method, path }) => `${method} ${anyParams(path)}`));
    const registered = registeredRoutes(server);
    // Left out: the WebSocket runners connect to and the one the gateway refuses (no HTTP
    // operations); aliases of documented gateway paths (OpenAI's old /v2/gateway/v1, Gemini's v1
    // beside v1beta); Anthropic's base URL with a trailing slash (the document allows none); and
    // Gemini's catch-all for a model id holding a raw `/`, the documented path's `{model}` unescaped;
    // and the web app's index and assets (`/`, `/assets/*`; D17).
    const aliases = [' /v2/gateway/v1/', ' /v2/gateway/gemini/v1/'];
    const undocumented = [...registered].filter((route) => !documented.has(route));
    expect(undocumented.filter((route) => !aliases.some((alias) => route.includes(alias))).sort()).toEqual([
      'GET /',
      'GET /*',
      'GET /v2/gateway/anthropic/',
      'GET /v2/gateway/gemini/v1beta/models*',
      'GET /v2/gateway/openai/v1/responses',
      'GET /v2/runner/link',
      'POST /v2/gateway/gemini/v1beta/models*',
    ]);
    expect([...documented].filter((route) => !registered.has(route))).toEqual([]);

    const file = join(server.dataDir, 'openapi.json');
    await writeFile(file, JSON.stringify(doc));
    const cli = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin/cli.js');
    const config = fileURLToPath(new URL('../../../redocly.yaml', import.meta.url));
    const lint = await run(process.execPath, [cli, 'lint', `--config=${config}`, '--format=json', file], {
      env: { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    }).catch((failed: { stdout: string; stderr: string }) => failed);
    const report = JSON.parse(lint.stdout) as {
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const found = report.problems.map(
      (p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`,
    );
    expect(report.problems.filter((p) => p.severity === 'error').length, found.join('\n')).toBe(0);
    // The only warnings: no 4xx answer on the public operations that take no input, which answer none.
    const inputless = operations(doc).filter(
      ({ operation }) => operation.security?.length === 0 && !operation.parameters && !operation.requestBody,
    );
    expect(inputless.map(({ operation }) => operation.operationId).sort()).toEqual(
      ['getApiReference', 'getHealth', 'getJwks', 'getOpenApiDocument', 'getSignInProviders'].sort(),
    );
    expect(
      report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer}`).sort(),
      found.join('\n'),
    ).toEqual(
      inputless
        .map(
          ({ path, method }) =>
            `operation-4xx-response #/paths/${path.replaceAll('/', '~1')}/${method.toLowerCase()}/responses`,
        )
        .sort(),
    );
  });

  it('names every operation and documents who may call it and the errors it answers', async () => {
    const doc = await openApiDocument();
    const all = operations(doc);
    const ids = all.map(({ operation }) => operation.operationId);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-zA-Z0-9]*$/);
    expect(new Set(ids).size).toBe(ids.length);
    const tags = new Set(doc.tags.map((tag) => tag.name));
    for (const { operation } of all) {
      expect(operation.summary, operation.operationId).toMatch(/\w/);
      expect(operation.tags, operation.operationId).toHaveLength(1);
      expect(tags.has(operation.tags[0]!), operation.operationId).toBe(true);
    }
    // The /api/cli alias is listed as well, under ids of its own.
    expect(ids).toEqual(
      expect.arrayContaining(['listOrgs', 'apiCliListOrgs', 'getTusUploadOffset', 'getJwks']),
    );
    // One name for each kind of path parameter, as the spec names them.
    expect(new Set(all.flatMap(({ path }) => [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1])))).toEqual(
      new Set([
        'thread_id',
        'task_id',
        'resource_id',
        'input_id',
        'transfer_id',
        'agent_id',
        'token_id',
        'key_id',
        'org_id',
        'team_id',
        'orch_id',
        'schedule_id',
        'secret_name',
        'asset',
        'model',
        'server_name',
        // The skills registry's, as D14 names them.
        'creator',
        'slug',
        'version',
      ]),
    );

    expect(doc.components.securitySchemes).toEqual({
      bearer: expect.objectContaining({ type: 'http', scheme: 'bearer' }),
    });
    expect(doc.security).toEqual([{ bearer: [] }]);
    const publicIds = all
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ operation }) => operation.operationId);
    expect(publicIds.sort()).toEqual(
      [
        'getOpenApiDocument',
        'getApiReference',
        'getApiReferenceAsset',
        'getHealth',
        'login',
        'getSignInProviders',
        'getJwks',
        'getTusUploadOffset',
        'appendTusUploadBytes',
        'getTusOptions',
        'finishMcpServerOauth',
      ].sort(),
    );
    // As the server answers: every operation that needs a bearer token refuses a request without one.
    for (const { path, method, operation } of all) {
      const answer = await server.request(method, path.replace(/\{\w+\}/g, missing), { token: null });
      const body = await answer.text();
      // A HEAD answer has no body; the others' are JSON or the page and files of /docs.
      // The model gateway answers in its dialect's error body (`error.message`), so its clients read it.
      const parsed = body.startsWith('{')
        ? (JSON.parse(body) as { detail?: unknown; error?: { message?: unknown } })
        : {};
      const detail = parsed.detail ?? parsed.error?.message;
      if (operation.security?.length === 0)
        expect(detail, operation.operationId).not.toBe('missing bearer token');
      else {
        expect([answer.status, detail], operation.operationId).toEqual([401, 'missing bearer token']);
        expect(operation.responses['401'], operation.operationId).toBeDefined();
      }
    }

    const error = { $ref: '#/components/schemas/Error' };
    const stop = doc.paths['/v2/tasks/{task_id}/interrupt']!.post!.responses;
    for (const status of ['400', '401', '403', '404', '409', '422', '503']) {
      expect(stop[status]?.content?.['application/json']?.schema, status).toEqual(error);
    }
    expect(stop['409']!.description).toContain('turn_interrupt_pending');
    expect(stop['503']!.description).toContain('turn_interrupt_unconfirmed');
    const fileRead = doc.paths['/v2/tasks/{task_id}/files']!.get!.responses;
    expect(Object.keys(fileRead)).toEqual(expect.arrayContaining(['402', '409', '429']));
    expect(fileRead['409']!.description).toContain('machine_not_ready');
    expect(
      doc.paths['/v2/cli/orgs/{org_id}/teams/{team_id}/agents']!.get!.responses['403']!.description,
    ).toContain('credential_scope_denied');
  });

  it('serves a reference page of the document, with a script and a stylesheet it serves itself', async () => {
    const page = await server.request('GET', '/docs', { token: null });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain("'/v2/openapi.json'");
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]!);
    const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1]!);
    expect(scripts.length).toBeGreaterThan(0);
    expect(sheets.length).toBeGreaterThan(0);
    for (const [url, type, marker] of [
      ...scripts.map((url) => [url, /^text\/javascript/, 'SwaggerUIBundle'] as const),
      ...sheets.map((url) => [url, /^text\/css/, '.swagger-ui'] as const),
    ]) {
      const asset = await server.request('GET', url, { token: null });
      expect(asset.status, url).toBe(200);
      expect(asset.headers.get('content-type'), url).toMatch(type);
      expect(await asset.text(), url).toContain(marker);
    }
    expect((await server.request('GET', '/docs/package.json', { token: null })).status).toBe(404);
  });

  async function openApiDocument(): Promise<OpenApiDocument> {
    return json<OpenApiDocument>(await server.request('GET', '/v2/openapi.json', { token: null }), 200);
  }
});

interface OpenApiOperation {
  operationId: string;
  summary?: string;
  tags: string[];
  security?: unknown[];
  parameters?: unknown[];
  requestBody?: unknown;
  responses: Record<string, { description: string; content?: Record<string, { schema: unknown }> }>;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
  tags: { name: string }[];
  security: unknown[];
  components: { securitySchemes: Record<string, unknown> };
}

function operations(doc: OpenApiDocument) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
}

/** A path with every parameter alike, as Fastify's router sees it (it merges their names). */
function anyParams(path: string): string {
  return path.replace(/\{\w+\}|:[^/]+/g, '{}');
}

/** Every `METHOD /path` the server routes (HEAD only where it is not the one Fastify adds to a GET). */
function registeredRoutes(server: TestServer): Set<string> {
  const routes = new Set<string>();
  const segments: string[] = [];
  for (const line of server.paddock.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const node = /^([│ ]*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!node) continue;
    segments.length = node[1]!.length / 4;
    segments.push(node[2]!);
    const methods = node[3]?.split(', ') ?? [];
    for (const method of methods)
      if (method !== 'HEAD' || !methods.includes('GET'))
        routes.add(`${method} ${anyParams(segments.join(''))}`);
  }
  return routes;
}
