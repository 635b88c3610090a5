import { randomUUID } from 'node:crypto';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  agentSpec,
  allEvents,
  eventSeen,
  hostProcesses,
  json,
  sandboxToken,
  settled,
  transcript,
} from './helpers.ts';
import { everythingEntry } from './mcp-everything.ts';
import { type RemoteMcpServer, startRemoteMcpServer } from './mcp-remote.ts';

const statuses = (events: ThreadEvent[]) => events.filter((e) => e.type === 'mcp.status').map((e) => e.data);

describe.each(testDatabases())('MCP servers in turns on $name', (database) => {
  let server: TestServer;
  let remote: RemoteMcpServer;
  let everything: string;

  beforeAll(async () => {
    // The remote MCP server listens on loopback: a deployment with a local server allows it so.
    server = await startTestServer(database, { PADDOCK_OUTBOUND_ALLOW: '127.0.0.1' });
    remote = await startRemoteMcpServer();
    everything = await everythingEntry(server);
  });
  afterAll(async () => {
    await server.close();
    await remote.close();
  });

  async function runThread(agent: Record<string, unknown>, input: string) {
    const { thread_id, agent_id } = await json<{ thread_id: string; agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec(agent), input } }),
      201,
    );
    await settled(server, thread_id, 60_000);
    return { threadId: thread_id, agentId: agent_id };
  }

  async function nextTurn(threadId: string, input: string) {
    await json(
      await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
        body: { input_id: randomUUID(), messages: [{ content: input }] },
      }),
      201,
    );
    await settled(server, threadId, 60_000);
  }

  it('runs a command server in the sandbox: its tool is called, its env is the sandbox’s with its own', async () => {
    const { threadId, agentId } = await runThread(
      {
        secrets: { AGENT_SECRET: 'agent-secret-value' },
        mcp_servers: [
          {
            name: 'everything',
            command: 'node',
            args: [everything, 'stdio'],
            env: { SERVER_OWN: 'own-value' },
          },
        ],
      },
      '::call mcp__everything__echo {"message":"hi"}',
    );
    const events = await allEvents(server, threadId);
    const start = events.find((e) => e.type === 'tool_call.start')!;
    expect(start.data).toMatchObject({ name: 'mcp__everything__echo', input: { message: 'hi' } });
    const end = events.find((e) => e.type === 'tool_call.end')!;
    expect(end.tool_id).toBe(start.tool_id);
    expect(end.data).toMatchObject({ status: 'ok', output: 'Echo: hi' });
    expect(statuses(events)).toEqual([
      { name: 'everything', transport: 'stdio', status: 'connecting', tool_count: 0, error: null },
      {
        name: 'everything',
        transport: 'stdio',
        status: 'connected',
        tool_count: expect.any(Number),
        error: null,
      },
    ]);
    // The status comes after turn.started and before the tool call.
    const types = events.map((e) => e.type);
    expect(types.indexOf('mcp.status')).toBeGreaterThan(types.indexOf('turn.started'));
    expect(types.lastIndexOf('mcp.status')).toBeLessThan(types.indexOf('tool_call.start'));
    expect((await transcript(server, threadId)).join('\n')).toContain('Echo: hi');

    // The same server serves the next turn (started once per sandbox), in /workspace, with the
    // sandbox's environment, the agent's secrets and its own env.
    await nextTurn(threadId, '::call mcp__everything__get-env {}');
    const later = (await allEvents(server, threadId)).slice(events.length);
    expect(statuses(later)).toEqual([
      {
        name: 'everything',
        transport: 'stdio',
        status: 'connected',
        tool_count: expect.any(Number),
        error: null,
      },
    ]);
    const env = JSON.parse(String(later.find((e) => e.type === 'tool_call.end')!.data.output)) as Record<
      string,
      string
    >;
    expect(env).toMatchObject({
      AGENT_SECRET: 'agent-secret-value',
      SERVER_OWN: 'own-value',
      PADDOCK_THREAD_ID: threadId,
    });
    expect(env.PADDOCK_TOKEN).toBeTruthy();

    // The control plane's report shows the sandbox's last connection.
    const { items } = await json<{ items: { name: string; transport: string; last_check: unknown }[] }>(
      await server.request('GET', `/v2/cli/agents/${agentId}/mcp-servers`),
      200,
    );
    expect(items[0]).toMatchObject({
      name: 'everything',
      transport: 'stdio',
      last_check: { status: 'ok', error: null, tool_count: expect.any(Number), source: 'sandbox' },
    });
  });

  it('offers the servers’ tools in knowledge_cloud too, its command given as a command line', async () => {
    const { threadId } = await runThread(
      {
        harness: 'knowledge_cloud',
        // No args: the command is a line, split as a shell would (the spec gives a server only `command`).
        mcp_servers: [{ name: 'everything', command: `node '${everything}' stdio` }],
      },
      '::call mcp__everything__get-sum {"a":2,"b":3}',
    );
    const events = await allEvents(server, threadId);
    expect(events.find((e) => e.type === 'tool_call.start')!.data).toMatchObject({
      name: 'mcp__everything__get-sum',
    });
    expect(events.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({ status: 'ok' });
    expect(String(events.find((e) => e.type === 'tool_call.end')!.data.output)).toContain('5');
  });

  it('reaches a url server through the relay, which adds its headers: they never enter the sandbox', async () => {
    const { threadId, agentId } = await runThread(
      { mcp_servers: [{ name: 'remote', url: remote.url, headers: { 'X-Api-Key': remote.apiKey } }] },
      '::call mcp__remote__lookup {"word":"paddock"}',
    );
    const events = await allEvents(server, threadId);
    expect(statuses(events).at(-1)).toEqual({
      name: 'remote',
      transport: 'http',
      status: 'connected',
      tool_count: 1,
      error: null,
    });
    expect(events.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({
      status: 'ok',
      output: 'paddock means remote-answer',
    });
    expect((await transcript(server, threadId)).join('\n')).toContain('paddock means remote-answer');
    expect(remote.seen.length).toBeGreaterThan(0);
    expect(remote.seen.every((key) => key === remote.apiKey)).toBe(true);
    // The relay recorded the connection as the server's last check.
    const probe = await server.paddock.services.store.db
      .selectFrom('mcp_server_probes')
      .selectAll()
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    expect(probe).toMatchObject({ server_name: 'remote', target: remote.url, status: 'ok', error: null });

    // The sandbox holds no trace of the header: not in its environment, not in any event.
    await nextTurn(threadId, '::sh env; cat /proc/self/environ | tr "\\0" "\\n"');
    const all = await allEvents(server, threadId);
    const shell = all.filter((e) => e.type === 'tool_call.end').at(-1)!;
    expect(String(shell.data.output)).toContain('PADDOCK_TOKEN');
    expect(JSON.stringify(all)).not.toContain(remote.apiKey);
  });

  it('refuses the relay to another thread’s token and to a server the agent does not have', async () => {
    const spec = {
      mcp_servers: [{ name: 'remote', url: remote.url, headers: { 'X-Api-Key': remote.apiKey } }],
    };
    const { threadId } = await runThread(spec, 'hello');
    const missing = await server.request('POST', `/v2/threads/${threadId}/mcp/nowhere`, {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ detail: { code: 'mcp_server_not_found' } });

    const other = await runThread(spec, 'hello');
    const otherToken = await sandboxToken(server, other.threadId);
    const foreign = await server.request('POST', `/v2/threads/${threadId}/mcp/remote`, {
      body: { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      token: otherToken,
    });
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).toContain('Thread not found');
  });

  it('keeps a command server through a Stop of the turn that started it, and starts it again once it died', async () => {
    const marker = randomUUID();
    const argv = ['node', everything, 'stdio', marker];
    // The first turn starts the server, then runs a command that a Stop ends.
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({ mcp_servers: [{ name: 'everything', command: argv[0], args: argv.slice(1) }] }),
          input: '::sh sleep 1000',
        },
      }),
      201,
    );
    await eventSeen(server, threadId, 'tool_call.start');
    const [first] = hostProcesses(argv);
    expect(first).toBeDefined();
    await json(await server.request('POST', `/v2/threads/${threadId}/interrupt`, { body: {} }), 200);
    await settled(server, threadId);
    // A Stop kills what the stopped turn started; the server belongs to the sandbox.
    expect(hostProcesses(argv)).toEqual([first]);
    let before = (await allEvents(server, threadId)).length;
    await nextTurn(threadId, '::call mcp__everything__echo {"message":"one"}');
    let later = (await allEvents(server, threadId)).slice(before);
    expect(statuses(later).map((s) => s.status)).toEqual(['connected']);
    expect(later.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({ output: 'Echo: one' });

    // The server dies between turns: the next turn starts it again and calls it.
    process.kill(first!, 'SIGKILL');
    await expect.poll(() => hostProcesses(argv), { timeout: 10_000 }).toEqual([]);
    before = (await allEvents(server, threadId)).length;
    await nextTurn(threadId, '::call mcp__everything__echo {"message":"two"}');
    later = (await allEvents(server, threadId)).slice(before);
    expect(statuses(later).map((s) => s.status)).toEqual(['connecting', 'connected']);
    expect(later.find((e) => e.type === 'tool_call.end')!.data).toMatchObject({
      status: 'ok',
      output: 'Echo: two',
    });
    expect(hostProcesses(argv)).toHaveLength(1);
    expect(hostProcesses(argv)).not.toEqual([first]);
  });

  it('reports a command server that fails, and the turn still runs', async () => {
    const { threadId } = await runThread(
      { mcp_servers: [{ name: 'broken', command: 'sh', args: ['-c', 'echo cannot start >&2; exit 3'] }] },
      'hello there',
    );
    const events = await allEvents(server, threadId);
    const failed = statuses(events).at(-1)!;
    expect(failed).toMatchObject({ name: 'broken', transport: 'stdio', status: 'failed', tool_count: 0 });
    expect(failed.error).toEqual(expect.stringContaining('cannot start'));
    expect(await transcript(server, threadId)).toEqual(['hello there', 'You said: hello there']);
    expect(events.at(-1)!.data).toMatchObject({ status: 'idle' });
  });
});
