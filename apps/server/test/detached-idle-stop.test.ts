import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { agentSpec, answerWhen, hostProcesses, json, settled } from './helpers.ts';

describe.each(testDatabases())('idle sandboxes on a detached runner ($name)', (database) => {
  let deployment: Deployment | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail')
      console.error(deployment?.output().split('\n').slice(-60).join('\n'));
    await deployment?.close();
  });

  it('stops an idle sandbox, keeps its workspace, revokes its token, and boots it again on a file read', async () => {
    const d = await startDeployment(database, {
      PADDOCK_RUNNER: 'detached',
      PADDOCK_SANDBOX_IDLE_STOP_MS: '1500',
    });
    deployment = d;
    await deployment.startServer();
    deployment.startRunner();
    await deployment.runnerConnected(1);

    const marker = String(700_000 + Math.floor(Math.random() * 99_999));
    const { thread_id: threadId } = await json<{ thread_id: string }>(
      await deployment.request('POST', '/v2/threads', {
        body: {
          agent: agentSpec(),
          input: `::sh echo kept > kept.txt; echo -n $PADDOCK_TOKEN > token.txt; nohup sleep ${marker} >/dev/null 2>&1 &`,
        },
      }),
      201,
    );
    await settled(deployment, threadId);
    expect(hostProcesses(['sleep', marker])).toHaveLength(1);
    // The runner stops it on its own; nothing of it is left on the host.
    await expect.poll(() => hostProcesses(['sleep', marker]), { timeout: 20_000 }).toEqual([]);

    // The stopped sandbox's token dies with it, before anything boots the thread again.
    const token = await readFile(join(deployment.dataDir, 'workspaces', threadId, 'token.txt'), 'utf8');
    const asSandbox = await answerWhen(
      () => d.request('GET', `/v2/threads/${threadId}`, { token }),
      (status) => status !== 200,
      10_000,
    );
    expect(asSandbox.status).toBe(401);

    // The server hears of the stop just after the processes are gone: once it has, a read wakes it.
    const waking = await answerWhen(
      () => d.request('GET', `/v2/tasks/${threadId}/files`),
      (status) => status !== 200,
      10_000,
    );
    expect((await json<{ detail: { code: string } }>(waking, 409)).detail.code).toBe('machine_not_ready');
    const listed = await answerWhen(
      () => d.request('GET', `/v2/tasks/${threadId}/files`),
      (status) => status === 200,
      20_000,
    );
    const files = await json<{ items: { name: string }[] }>(listed, 200);
    expect(files.items.map((f) => f.name)).toContain('kept.txt');
  }, 60_000);
});
