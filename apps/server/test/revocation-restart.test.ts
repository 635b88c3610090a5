import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { testDatabases } from '@paddock/testing';
import { type Deployment, startDeployment } from '@paddock/testing/deployment';
import { afterEach, describe, expect, it } from 'vitest';
import { createIdleThread, sandboxToken } from './helpers.ts';

/**
 * Issue 10 §4: the sandboxes of the in-process runner die with the server; after a kill -9 and a
 * start on the same data, their thread tokens are refused. A detached runner's sandboxes outlive
 * the server and keep theirs. Real processes (`node apps/server/src/main.ts`).
 */
describe.each(testDatabases())('thread tokens across a server crash ($name)', (database) => {
  let deployment: Deployment | undefined;
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail')
      console.error(deployment?.output().split('\n').slice(-60).join('\n'));
    if (deployment) {
      await deployment.killServer('SIGTERM');
      unmountLeftovers(deployment.dataDir);
      await deployment.close();
    }
    deployment = undefined;
  });

  const read = async (d: Deployment, threadId: string, token: string) =>
    (await d.request('GET', `/v2/threads/${threadId}`, { token })).status;

  it('refuses the token of an in-process sandbox killed with its server', async () => {
    const d = await startDeployment(database, { PADDOCK_RUNNER: 'embedded' });
    deployment = d;
    await d.startServer();
    const threadId = await createIdleThread(d);
    const token = await sandboxToken(d, threadId);
    expect(await read(d, threadId, token)).toBe(200);
    await d.killServer('SIGKILL');
    unmountLeftovers(d.dataDir);
    await d.startServer();
    expect(await read(d, threadId, token)).toBe(401);
    // The admin's own token is untouched.
    expect(await read(d, threadId, d.token)).toBe(200);
  }, 60_000);

  it('keeps the token of a detached runner’s sandbox, which outlives the server', async () => {
    const d = await startDeployment(database);
    deployment = d;
    await d.startServer();
    d.startRunner();
    await d.runnerConnected(1);
    const threadId = await createIdleThread(d);
    const token = await sandboxToken(d, threadId);
    await d.killServer('SIGKILL');
    await d.startServer();
    await d.runnerConnected(2);
    expect(await read(d, threadId, token)).toBe(200);
  }, 60_000);
});

/**
 * A server killed with SIGKILL leaves its in-process runner's bind mounts (`shared-mounts/`) behind,
 * which would keep the data dir from being removed: unmounted here, deepest first.
 */
function unmountLeftovers(dataDir: string): void {
  const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((path) => path.startsWith(`${dataDir}/`))
    .sort()
    .reverse();
  for (const path of new Set(mounts)) execFileSync('umount', ['-l', path]);
}
