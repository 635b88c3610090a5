import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ThreadEvent } from '@paddock/protocol';
import { defaultSandboxImage, nodeInSandbox } from '@paddock/sandbox';
import { testDatabases } from '@paddock/testing';
import { ensureTestImage, startTestDockerd, type TestDockerd } from '@paddock/testing/docker';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { agentSpec, allEvents, json, sandboxToken, settled } from './helpers.ts';

/**
 * sandbox_b: threads in containers on a Docker engine. The test starts Debian's dockerd on a socket
 * of its own and builds the base image from a debootstrapped Debian (cached between runs), as
 * `npm run docker-image` does: no registry is involved.
 */
const dockerd = await startTestDockerd();
const unavailable = 'unavailable' in dockerd ? dockerd.unavailable : undefined;
if (unavailable) console.warn(`sandbox_b tests skipped: ${unavailable}`);

interface Capabilities {
  providers: {
    machine_kind: string;
    available: boolean;
    reason?: string;
    isolation?: string;
    sizes: string[];
  }[];
}

const configDir = mkdtempSync(join(tmpdir(), 'paddock-docker-config-'));
const config = join(configDir, 'paddock.yaml');
writeFileSync(config, 'providers:\n  sandbox_b: { enabled: true }\n');
const projectRoot = resolve(import.meta.dirname, '..', '..', '..');
const nodeInside = nodeInSandbox(process.execPath);

/** An address of this host other than loopback, which a sandbox must not reach. */
const hostAddress =
  Object.values(networkInterfaces())
    .flat()
    .find((address) => address && address.family === 'IPv4' && !address.internal)?.address ?? '127.0.0.1';

const sandboxB = (server: TestServer) =>
  server.paddock.services.providers.capabilities().providers.find((p) => p.machine_kind === 'sandbox_b')!;

/** Waits for the server's first probe of the engine, which runs in the background from its start. */
const probed = (server: TestServer) =>
  expect.poll(() => sandboxB(server).reason ?? '', { timeout: 10_000 }).not.toContain('not probed yet');

/** Runs one `::sh` turn on the thread and answers the command's output. */
async function shell(server: TestServer, threadId: string, command: string): Promise<string> {
  const before = (await allEvents(server, threadId)).length;
  await json(
    await server.request('POST', `/v2/threads/${threadId}/messages`, {
      body: { messages: [{ content: `::sh ${command}` }], run: true },
    }),
    201,
  );
  const thread = await settled(server, threadId, 60_000);
  const events = (await allEvents(server, threadId)).slice(before);
  const end = events.find((e) => e.type === 'tool_call.end') as ThreadEvent | undefined;
  expect(end, `${thread.status}: ${JSON.stringify(events.map((e) => [e.type, e.data]))}`).toBeDefined();
  return String((end!.data as { output?: string }).output);
}

// On one database: the provider is the subject; the store's own tests run on both.
describe.skipIf(unavailable !== undefined).each(testDatabases().slice(0, 1))(
  'sandbox_b on Docker ($name)',
  (database) => {
    const engine = () => (dockerd as TestDockerd).engine;
    const dockerHost = () => (dockerd as TestDockerd).dockerHost;
    let server: TestServer | undefined;

    beforeAll(async () => {
      // The first run debootstraps (a minute or two); later runs import the cached tarball.
      await ensureTestImage(engine(), defaultSandboxImage);
    }, 15 * 60_000);

    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('runs a thread in a container: the image, no network, an unprivileged user, size L, the workspace kept', async () => {
      server = await startTestServer(database, { PADDOCK_CONFIG: config, DOCKER_HOST: dockerHost() });
      await probed(server);
      const capabilities = await json<Capabilities>(
        await server.request('GET', '/v2/machines/capabilities'),
        200,
      );
      const offered = capabilities.providers.find((p) => p.machine_kind === 'sandbox_b')!;
      expect(offered).toMatchObject({ available: true, sizes: ['L'] });
      expect(offered.isolation).toContain(`Docker containers on ${dockerHost()}`);
      // Every runtime may run on sandbox_b, knowledge_cloud included.
      await json(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ machine_kind: 'sandbox_b', harness: 'knowledge_cloud' }) },
        }),
        201,
      );

      const { thread_id } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: {
            agent: agentSpec({ machine_kind: 'sandbox_b', secrets: { GREETING: 'hello-from-secret' } }),
          },
        }),
        201,
      );
      const probe = [
        'cat /etc/paddock-sandbox-image | head -1',
        'test -f /.dockerenv && echo dockerenv',
        'echo "host=$(hostname) uid=$(id -u)"',
        'echo "mem=$(cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max)"',
        'echo "pids=$(cat /sys/fs/cgroup/pids/pids.max 2>/dev/null || cat /sys/fs/cgroup/pids.max)"',
        `(echo > /dev/tcp/${hostAddress}/${new URL(server.url).port}) 2>/dev/null && echo reached-host || echo host-unreachable`,
        `(echo > /dev/tcp/127.0.0.1/${new URL(server.url).port}) 2>/dev/null && echo reached-server || echo server-unreachable`,
        'test -e /var/run/docker.sock && echo docker-socket || echo no-docker-socket',
        'touch /usr/x 2>/dev/null && echo image-writable || echo image-read-only',
        'test -x /opt/paddock/supervisor/paddock-supervisor && echo supervisor-at-opt-paddock',
        'test -e /opt/paddock/node_modules || test -e /opt/paddock/packages || echo no-node-modules',
        'touch /opt/paddock/supervisor/x 2>/dev/null && echo code-writable || echo code-read-only',
        `test -e ${projectRoot} && echo checkout-visible; grep -c ${projectRoot} /proc/self/mountinfo`,
        'grep Seccomp: /proc/self/status; unshare -Ur true 2>/dev/null && echo userns-allowed',
        'echo "secret=$GREETING"',
        'echo kept > note.txt',
        // Out through the container's egress proxy socket: refused by the policy (registries).
        // (The image has no curl: the CONNECT by hand.)
        "exec 3<>/dev/tcp/127.0.0.1/8788; printf 'CONNECT example.com:443 HTTP/1.1\\r\\n\\r\\n' >&3; head -1 <&3",
      ].join('; ');
      const seen = await shell(server, thread_id, probe);
      expect(seen).toContain('suite=bookworm');
      expect(seen).toContain('dockerenv');
      // The thread's own uid: its workspace's owner.
      const owner = statSync(join(server.dataDir, 'workspaces', thread_id)).uid;
      expect(seen).toContain(`host=sandbox uid=${process.getuid?.() === 0 ? owner : process.getuid?.()}`);
      expect(seen).toContain(`mem=${4 * 1024 ** 3}`);
      expect(seen).toContain('pids=1024');
      expect(seen).toContain('host-unreachable');
      expect(seen).toContain('HTTP/1.1 403 Forbidden');
      await vi.waitFor(
        async () =>
          expect(
            (await allEvents(server!, thread_id)).find((e) => e.type === 'network.request')?.data,
          ).toMatchObject({
            host: 'example.com',
            allowed: false,
          }),
        { timeout: 10_000 },
      );
      expect(seen).toContain('server-unreachable');
      expect(seen).toContain('no-docker-socket');
      expect(seen).toContain('image-read-only');
      expect(seen).toContain('supervisor-at-opt-paddock\nno-node-modules\ncode-read-only');
      // The code is at a neutral path, the checkout's named nowhere; the engine's seccomp profile holds.
      expect(seen).toContain('code-read-only\n0\nSeccomp:\t2\n');
      expect(seen).toContain('secret=hello-from-secret');

      // The engine runs it as one labelled container, whose configuration holds no secret.
      const [containerId, ...others] = await engine().containersLabelled('dev.paddock.sandbox');
      expect(others).toEqual([]);
      const inspected = await engine().call('GET', `/containers/${containerId}/json`);
      expect(inspected.body.toString()).not.toContain('hello-from-secret');
      expect(JSON.parse(inspected.body.toString()).HostConfig).toMatchObject({
        NetworkMode: 'none',
        ReadonlyRootfs: true,
        CapDrop: ['ALL'],
      });

      // A follow-up runs in the same container, on the same workspace.
      expect(await shell(server, thread_id, 'cat note.txt')).toBe('kept\n');
      expect(await engine().containersLabelled('dev.paddock.sandbox')).toEqual([containerId]);
      const starts = (await allEvents(server, thread_id)).filter(
        (e) => e.type === 'sandbox.status' && (e.data as { status: string }).status === 'starting',
      );
      expect(starts).toHaveLength(1);

      // The workspace is the thread's, read by the file endpoints like any other.
      const listing = await json<{ items: { name: string; owner: string }[] }>(
        await server.request('GET', `/v2/tasks/${thread_id}/files`),
        200,
      );
      expect(listing.items.map((i) => i.name)).toContain('note.txt');
      const content = await server.request('GET', `/v2/tasks/${thread_id}/files/content?path=note.txt`);
      expect(await content.text()).toBe('kept\n');

      // Code runs go to the same container, with the sandbox's own credential.
      const token = await sandboxToken(server, thread_id);
      const run = await json<{ exit_code: number; stdout: string }>(
        await server.request('POST', `/v2/tasks/${thread_id}/code/run/sync`, {
          token,
          body: { language: 'bash', code: 'hostname; cat /etc/paddock-sandbox-image | head -1' },
        }),
        200,
      );
      expect(run).toMatchObject({ exit_code: 0, stdout: 'sandbox\nsuite=bookworm\n' });

      // Past L's 4 GiB of memory a process is killed; the sandbox itself lives on.
      const hog = `${nodeInside} -e 'const a = []; for (;;) a.push(Buffer.alloc(256 << 20, 1))'`;
      expect(await shell(server, thread_id, `${hog}; echo "exit=$?"`)).toContain('exit=137');
      expect(await shell(server, thread_id, 'cat note.txt')).toBe('kept\n');

      // The server's shutdown removes its containers.
      await server.close();
      server = undefined;
      expect(await engine().containersLabelled('dev.paddock.sandbox')).toEqual([]);
    }, 180_000);

    it('runs a coding agent from the program cache, which the container sees read-only', async () => {
      server = await startTestServer(database, { PADDOCK_CONFIG: config, DOCKER_HOST: dockerHost() });
      await probed(server);
      const { thread_id } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: {
            agent: agentSpec({ machine_kind: 'sandbox_b', harness: 'coding_gamma', model: 'scripted' }),
            input:
              '::sh expr 6007 \\* 7; touch /opt/paddock/harnesses/x 2>/dev/null && echo cache-writable || echo cache-read-only',
          },
        }),
        201,
      );
      const thread = await settled(server, thread_id, 120_000);
      const events = await allEvents(server, thread_id);
      expect(thread.status, JSON.stringify(events.filter((e) => e.type === 'error'))).toBe('idle');
      const output = events
        .filter((e) => e.type === 'tool_call.end')
        .map((e) => String((e.data as { output?: string }).output))
        .join('\n');
      // 42049 is in no command: Codex ran it, in the container.
      expect(output).toContain('42049');
      expect(output).toContain('cache-read-only');
    }, 180_000);

    it('says why sandbox_b cannot run without an engine or without its image, and refuses its agents', async () => {
      server = await startTestServer(database, {
        PADDOCK_CONFIG: config,
        DOCKER_HOST: 'unix:///nonexistent/docker.sock',
      });
      await probed(server);
      expect(sandboxB(server)).toMatchObject({ available: false });
      expect(sandboxB(server).reason).toMatch(/^no Docker engine at unix:\/\/\/nonexistent\/docker\.sock/);
      const refused = await json<{ detail: { code: string; message: string } }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ machine_kind: 'sandbox_b' }) },
        }),
        503,
      );
      expect(refused.detail.code).toBe('provider_unavailable');
      expect(refused.detail.message).toContain('no Docker engine');
      await server.close();

      server = await startTestServer(database, {
        PADDOCK_CONFIG: config,
        DOCKER_HOST: dockerHost(),
        PADDOCK_DOCKER_IMAGE: 'paddock-sandbox:missing',
      });
      await probed(server);
      expect(sandboxB(server)).toMatchObject({ available: false });
      expect(sandboxB(server).reason).toContain('has no image paddock-sandbox:missing');
      expect(sandboxB(server).reason).toContain('npm run docker-image');
    });
  },
);

afterAll(async () => {
  if (!unavailable) await (dockerd as TestDockerd).close();
  rmSync(configDir, { recursive: true, force: true });
});
