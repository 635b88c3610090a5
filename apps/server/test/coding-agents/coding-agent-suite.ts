import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ThreadEvent } from '@paddock/protocol';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { greeterSkillMd as skillMd } from '../greeter-skill.ts';
import { agentSpec, allEvents, json, settled, stopTask, transcript } from '../helpers.ts';
import { everythingEntry } from '../mcp-everything.ts';
import { type RemoteMcpServer, startRemoteMcpServer } from '../mcp-remote.ts';

/** First answers can wait for an install; the programs themselves answer in seconds. */
const turnTimeoutMs = 180_000;

/**
 * What issue 14 asks of every coding agent, on a real sandbox with the scripted model: a shell
 * command through the agent's own tool, a follow-up that saw the earlier turn (also after the
 * sandbox stopped and booted again), Stop during a slow model call, an MCP tool of a command server in
 * the sandbox and one of a url server through the relay, a skill, and permission requests answered.
 * Last, a thread that takes the standby sandbox, where the program already runs with its session
 * open. One database: the agents do not touch the store; the store's own tests run on both.
 */
export function codingAgentSuite(
  harness: string,
  options: {
    /** The program asks before it runs some tools (`session/request_permission`). */
    asksPermission?: boolean;
    /** The size of the standby sandbox, and of the thread that takes it (default S). */
    standbySize?: 'S' | 'M';
    /**
     * The program's npm package wraps a native program in a Node launcher: the sandbox runs the
     * native program and no launcher beside it (each matched in the sandbox's command lines).
     */
    wrapped?: { launcher: RegExp; native: RegExp };
  } = {},
) {
  const [database] = testDatabases();
  describe(`${harness} in a sandbox on ${database!.name}`, () => {
    let server: TestServer;
    let everything: string;
    let remote: RemoteMcpServer;

    beforeAll(async () => {
      remote = await startRemoteMcpServer();
      const config = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
      // sandbox_c stops its sandbox soon after a turn: the next turn boots a fresh one.
      writeFileSync(config, 'providers:\n  sandbox_c: { enabled: true }\n');
      server = await startTestServer(database!, {
        PADDOCK_CONFIG: config,
        // One standby sandbox, with this program started in it ahead of a thread (the last test).
        PADDOCK_STANDBY_SANDBOXES: '1',
        PADDOCK_STANDBY_HARNESSES: harness,
        PADDOCK_STANDBY_SIZE: options.standbySize ?? 'S',
        PADDOCK_SANDBOX_IDLE_MS: '600',
        PADDOCK_SANDBOX_IDLE_STOP_MS: '1500',
        // The url MCP server listens on loopback.
        PADDOCK_OUTBOUND_ALLOW: '127.0.0.1',
      });
      everything = await everythingEntry(server);
      const files = [{ path: 'SKILL.md', content: skillMd }];
      await json(
        await server.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }),
        201,
      );
    }, turnTimeoutMs);
    afterAll(async () => {
      await server?.close();
      await remote?.close();
    });

    async function send(threadId: string, content: string) {
      await json(
        await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
          body: { input_id: randomUUID(), messages: [{ content }] },
        }),
        201,
      );
      return settled(server, threadId, turnTimeoutMs);
    }

    const ofType = (events: ThreadEvent[], type: string) => events.filter((e) => e.type === type);

    // One thread through it all, as a user would have it: every program start costs seconds.
    it(
      'runs a shell command and MCP tools (in the sandbox and through the relay), sees its instructions and skill, remembers the conversation across turns and a sandbox restart, stops within five seconds, and is allowed by policy',
      async () => {
        const marker = `instr-${randomUUID().slice(0, 8)}`;
        const { thread_id: threadId } = await json<{ thread_id: string }>(
          await server.request('POST', '/v2/threads', {
            body: {
              agent: agentSpec({
                harness,
                model: 'scripted',
                // sandbox_c: its sandbox stops soon after a turn, so a later turn boots a fresh one.
                machine_kind: 'sandbox_c',
                instructions: `Answer briefly. ${marker}`,
                skills: [{ source: 'registry:default/greeter' }],
                mcp_servers: [
                  { name: 'everything', command: 'node', args: [everything, 'stdio'] },
                  { name: 'remote', url: remote.url, headers: { 'X-Api-Key': remote.apiKey } },
                ],
              }),
              input: [
                '::sh expr 6007 \\* 7',
                `::seen ${marker}`,
                '::seen Greets people the Paddock way',
              ].join('\n'),
            },
          }),
          201,
        );
        const first = await settled(server, threadId, turnTimeoutMs);
        let events = await allEvents(server, threadId);
        expect(first.status, JSON.stringify(ofType(events, 'error'))).toBe('idle');
        const starts = ofType(events, 'tool_call.start');
        const ends = ofType(events, 'tool_call.end');
        expect(starts.length).toBeGreaterThan(0);
        expect(ends.map((e) => e.data.tool_id).sort()).toEqual(starts.map((e) => e.data.tool_id).sort());
        // 42049 is in no command: the program ran it.
        expect(ends.map((e) => e.data.output).join('\n')).toContain('42049');
        expect((await transcript(server, threadId)).join('\n')).toContain('seen: yes\nseen: yes');

        await send(threadId, '::call *echo {"message": "through-mcp"}\n::call *lookup {"word": "relayed"}');
        events = await allEvents(server, threadId);
        const outputs = ofType(events, 'tool_call.end')
          .map((e) => e.data.output)
          .join('\n');
        expect(outputs).toContain('through-mcp');
        expect(outputs).toContain('relayed means remote-answer');
        // The relay added the server's header; the sandbox never held it.
        expect(remote.seen.length).toBeGreaterThan(0);
        expect(remote.seen.every((key) => key === remote.apiKey)).toBe(true);
        expect(JSON.stringify(events)).not.toContain(remote.apiKey);

        await send(threadId, '::seen 42049');
        expect((await transcript(server, threadId)).at(-1)).toContain('seen: yes');

        // The sandbox sleeps, then stops; the next turn boots a fresh one, where the program resumes.
        const statuses = async () =>
          ofType(await allEvents(server, threadId), 'sandbox.status').map((e) => e.data.status);
        await expect.poll(async () => (await statuses()).at(-1), { timeout: 20_000 }).toBe('stopped');
        await send(threadId, '::seen through-mcp');
        expect((await statuses()).slice(-2)).toEqual(['starting', 'running']);
        expect((await transcript(server, threadId)).at(-1)).toContain('seen: yes');

        await json(
          await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
            body: { input_id: randomUUID(), messages: [{ content: '::sleep 6000\nnever said' }] },
          }),
          201,
        );
        await expect
          .poll(async () => ofType(await allEvents(server, threadId), 'turn.started').length, {
            timeout: 20_000,
          })
          .toBe(5);
        // The program runs already: a moment later its model call is under way.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        const stopAt = Date.now();
        expect((await stopTask(server, threadId, {})).status).toBe(200);
        const stopped = await settled(server, threadId, 10_000);
        expect(Date.now() - stopAt).toBeLessThan(5_000);
        expect(stopped.status).toBe('idle');
        expect(ofType(await allEvents(server, threadId), 'turn.ended').at(-1)?.data.stop_reason).toBe(
          'cancelled',
        );

        // Some programs send the stopped message again, joined to the next (the script's sleep with it).
        await send(threadId, 'still here?');
        expect((await transcript(server, threadId)).at(-1)).toContain('still here?');

        // A program that asks before it acts is allowed by policy, each time, and it is recorded
        // against the tool call it allowed (the others run their tools without asking).
        events = await allEvents(server, threadId);
        const asked = ofType(events, 'permission.request');
        const calls = ofType(events, 'tool_call.start').map((e) => e.data.tool_id);
        if (options.asksPermission) expect(asked.length).toBeGreaterThanOrEqual(2);
        else expect(asked).toEqual([]);
        for (const request of asked) {
          expect(request.data.decision).toMatch(/^allow_/);
          expect(calls).toContain(request.data.tool_id);
        }
      },
      4 * turnTimeoutMs,
    );

    // The standby has waited through the test above: its program is up, its session open.
    it(
      'a new thread takes the program a standby sandbox started ahead: its model, instructions, token and environment arrive with the thread',
      async () => {
        const marker = `standby-${randomUUID().slice(0, 8)}`;
        const created = await json<{ thread_id: string }>(
          await server.request('POST', '/v2/threads', {
            body: {
              agent: agentSpec({
                harness,
                model: 'scripted',
                instructions: `Answer briefly. ${marker}`,
                machine_size: options.standbySize ?? 'S',
              }),
              // BASH_ENV is in the environment only of a program a standby started.
              input: `::sh echo "thread=$PADDOCK_THREAD_ID token=\${PADDOCK_TOKEN:0:8} \${BASH_ENV:+ahead}"\n::seen ${marker}`,
            },
          }),
          201,
        );
        const threadId = created.thread_id;
        const first = await settled(server, threadId, turnTimeoutMs);
        const events = await allEvents(server, threadId);
        expect(first.status, JSON.stringify(ofType(events, 'error'))).toBe('idle');
        // The shell the program started sees the thread's variables; the model saw the instructions.
        const outputs = ofType(events, 'tool_call.end').map((e) => e.data.output);
        expect(outputs.join('\n')).toContain(`thread=${threadId} token=pdk_thr_ ahead`);
        expect((await transcript(server, threadId)).join('\n')).toContain('seen: yes');
        // Usage is counted as the agent's model, whatever name the program asked for.
        expect(ofType(events, 'usage').map((e) => e.data.model)).toContain('scripted');
        // The same session goes on.
        const next = await send(threadId, `::seen thread=${threadId}`);
        const errors = ofType(await allEvents(server, threadId), 'error');
        expect(next.status, JSON.stringify(errors)).toBe('idle');
        expect((await transcript(server, threadId)).at(-1)).toContain('seen: yes');

        if (options.wrapped) {
          await send(threadId, "::sh cat /proc/[0-9]*/cmdline | tr '\\0' ' '");
          const listed = ofType(await allEvents(server, threadId), 'tool_call.end').at(-1)?.data.output;
          expect(listed).toMatch(options.wrapped.native);
          expect(listed).not.toMatch(options.wrapped.launcher);
        }
      },
      turnTimeoutMs,
    );
  });
}
