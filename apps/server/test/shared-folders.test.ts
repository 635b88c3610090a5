import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

describe.each(testDatabases())('team shared folders on $name', (database) => {
  let server: TestServer;
  let sharedFolders = false;
  beforeAll(async () => {
    server = await startTestServer(database, { PADDOCK_STANDBY_SANDBOXES: '1' });
    const { providers } = await json<{ providers: { machine_kind: string; shared_folders: boolean }[] }>(
      await server.request('GET', '/v2/machines/capabilities'),
      200,
    );
    sharedFolders = providers.find((p) => p.machine_kind === 'sandbox_a')!.shared_folders;
  });
  afterAll(() => server.close());

  const threads = new Map<string, string>();

  /** Runs the command in a turn of the thread of `instructions` (made on first use). */
  async function shell(command: string, instructions: string): Promise<string> {
    let threadId = threads.get(instructions);
    if (threadId) {
      await json(
        await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
          body: { input_id: randomUUID(), messages: [{ content: `::sh ${command}` }] },
        }),
        201,
      );
    } else {
      ({ thread_id: threadId } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ instructions }), input: `::sh ${command}` },
        }),
        201,
      ));
      threads.set(instructions, threadId);
    }
    // `find /` walks the sandbox's whole file system (the program cache too): over 20 s on a loaded machine.
    await settled(server, threadId, 60_000);
    const ended = (await allEvents(server, threadId)).filter((e) => e.type === 'tool_call.end').at(-1);
    return (ended!.data as { output: string }).output;
  }

  it("mounts the team's folder at /shared in every sandbox of the team, and nothing of other teams", {
    timeout: 120_000,
  }, async (context) => {
    if (!sharedFolders) context.skip();
    const { id: teamId } = await server.paddock.services.store.db
      .selectFrom('teams')
      .select('id')
      .executeTakeFirstOrThrow();
    const other = join(server.dataDir, 'shared', 'another-team');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'secret-of-another-team'), 'no\n');

    // Two threads of two agents of the team, so two sandboxes (a standby taken over, then a fresh one or another standby).
    expect(await shell('echo from-one > /shared/note.txt && echo written', 'writer')).toBe('written\n');
    expect(
      await shell(
        'cat /shared/note.txt; ls -a /shared; find / -name secret-of-another-team 2>/dev/null | wc -l',
        'reader',
      ),
    ).toBe('from-one\n.\n..\nnote.txt\n0\n');
    const onHost = join(server.dataDir, 'shared', teamId, 'note.txt');
    expect(readFileSync(onHost, 'utf8')).toBe('from-one\n');
    // Each thread runs as a uid of its own: both still add files after the other booted, each
    // keeping its own (the folder is sticky, like /tmp).
    expect(await shell('echo from-two > /shared/two.txt && echo written', 'reader')).toBe('written\n');
    expect(await shell('echo again > /shared/three.txt && cat /shared/two.txt', 'writer')).toBe('from-two\n');
    expect(await shell('rm -f /shared/note.txt 2>/dev/null; cat /shared/note.txt', 'reader')).toBe(
      'from-one\n',
    );
  });

  it('shows /shared nosuid and nodev, so nothing placed there runs with privileges', async (context) => {
    if (!sharedFolders) context.skip();
    // The last mount at /shared is the team's folder, on top of the sandbox's own mount point.
    const options = await shell(
      `awk '$5 == "/shared" { options = $6 } END { print options }' /proc/self/mountinfo`,
      'flags',
    );
    expect(options.trim().split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev']));
  });
});
