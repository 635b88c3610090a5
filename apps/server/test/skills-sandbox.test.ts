import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { greeterSkillMd as skillMd } from './greeter-skill.ts';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

// On one database, as below: what is tested is how each provider shows the skills; publishing
// them, in the store, is tested on both (skills-registry.test.ts).
describe.each(testDatabases().slice(0, 1))('skills in a thread on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer(database);
  });
  afterAll(() => server.close());

  it('a turn reads a published skill read-only under $PADDOCK_SKILLS_DIR, listed in coding_alpha instructions', async () => {
    const files = [
      { path: 'SKILL.md', content: skillMd },
      { path: 'templates/hello.txt', content: 'hello from the greeter skill\n' },
    ];
    await json(
      await server.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }),
      201,
    );

    const input = [
      '::sh echo "dir=$PADDOCK_SKILLS_DIR"; cat $PADDOCK_SKILLS_DIR/greeter/templates/hello.txt',
      '::call read {"path":"/skills/greeter/SKILL.md"}',
      '::call list {"path":"/skills/greeter/templates"}',
      '::sh touch $PADDOCK_SKILLS_DIR/greeter/new.txt 2>&1 || echo create-refused',
      '::sh echo changed >> $PADDOCK_SKILLS_DIR/greeter/SKILL.md 2>&1 || echo append-refused',
      '::call write {"path":"/skills/greeter/SKILL.md","content":"changed"}',
      '::seen /skills/greeter/SKILL.md): Greets people the Paddock way',
    ].join('\n');
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({
            harness: 'coding_alpha',
            machine_kind: 'sandbox_a',
            skills: [{ source: 'registry:default/greeter' }],
          }),
          input,
        },
      }),
      201,
    );
    await settled(server, thread_id, 60_000);
    const events = await allEvents(server, thread_id);
    expect(events.find((e) => e.type === 'skills.resolved')?.data).toEqual({
      skills: [{ source: 'registry:default/greeter', creator: 'default', slug: 'greeter', version: '1.0.0' }],
    });
    // The calls of one step run side by side: each end is found by its call's input.
    const inputs = new Map(
      events
        .filter((e) => e.type === 'tool_call.start')
        .map((e) => [e.tool_id, JSON.stringify(e.data.input)]),
    );
    const ends = events.filter((e) => e.type === 'tool_call.end');
    expect(ends).toHaveLength(6);
    const result = (text: string) => {
      const end = ends.find((e) => inputs.get(e.tool_id)?.includes(text));
      if (!end) throw new Error(`no call with ${text}`);
      return end.data as { status: string; output?: string; error?: string };
    };
    expect(result('templates/hello.txt')).toMatchObject({
      status: 'ok',
      output: 'dir=/skills\nhello from the greeter skill\n',
    });
    expect(result('"/skills/greeter/SKILL.md"}')).toMatchObject({ status: 'ok' });
    expect(result('"/skills/greeter/SKILL.md"}').output).toContain(
      'Answer with the line in templates/hello.txt.',
    );
    expect(result('/skills/greeter/templates"').output).toContain('"name":"hello.txt"');
    expect(result('new.txt').output).toMatch(/Read-only file system[\s\S]*create-refused/);
    // The files are root's and read-only to the sandbox's user, on a read-only mount.
    expect(result('echo changed').output).toMatch(/append-refused/);
    // The write tool stays confined to the workspace.
    expect(result('"content":"changed"')).toMatchObject({ status: 'error' });

    // The skill's name, description and SKILL.md path were in the model's instructions.
    const answers = events.filter((e) => e.type === 'assistant.message').map((e) => String(e.data.content));
    expect(answers).toContain('seen: yes');
    // The file the turn read reaches the transcript.
    const transcript = await json<{ items: { role: string; content: string }[] }>(
      await server.request('GET', `/v2/threads/${thread_id}/messages`),
      200,
    );
    expect(JSON.stringify(transcript.items)).toContain('hello from the greeter skill');
    // Nothing in the sandbox reached the published version.
    const version = await json<{ files: { content: string }[] }>(
      await server.request('GET', '/v2/skills/default/greeter/versions/1.0.0'),
      200,
    );
    expect(version.files.map((f) => f.content)).toEqual([skillMd, 'hello from the greeter skill\n']);
  });
});

describe.each(testDatabases().slice(0, 1))('skills on a detached runner ($name)', (database) => {
  let deployment: Deployment | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail')
      console.error(deployment?.output().split('\n').slice(-60).join('\n'));
    await deployment?.close();
  });

  it('the runner binds the folders the server wrote, read-only, at $PADDOCK_SKILLS_DIR', async () => {
    const d = await startDeployment(database, { PADDOCK_RUNNER: 'detached' });
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);
    const files = [
      { path: 'SKILL.md', content: skillMd },
      { path: 'templates/hello.txt', content: 'hello over the link\n' },
    ];
    await json(await d.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }), 201);
    const { thread_id } = await json<{ thread_id: string }>(
      await d.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec({ skills: [{ source: 'registry:default/greeter@1.0.0' }] }),
          input:
            '::sh cat $PADDOCK_SKILLS_DIR/greeter/templates/hello.txt; touch /skills/greeter/x 2>&1 || true',
        },
      }),
      201,
    );
    await settled(d, thread_id, 60_000);
    const end = (await allEvents(d, thread_id)).find((e) => e.type === 'tool_call.end');
    expect(end?.data.output).toMatch(/^hello over the link\n.*Read-only file system/s);
  });
});
