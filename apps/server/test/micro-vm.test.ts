import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkMicroVmHost, findGuestKernel } from '@paddock/sandbox';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { probingReason } from '../src/sandbox-hosts/micro-vm-check.ts';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

interface Provider {
  machine_kind: string;
  available: boolean;
  reason?: string;
  isolation?: string;
}

const sandboxF = configFile('providers:\n  sandbox_f: { enabled: true }\n');

function configFile(content: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
  writeFileSync(path, content);
  return path;
}

/** sandbox_f as capabilities reports it once the start-up check is in. */
async function microVmProvider(server: TestServer): Promise<Provider> {
  const until = Date.now() + 20_000;
  for (;;) {
    const { providers } = await json<{ providers: Provider[] }>(
      await server.request('GET', '/v2/machines/capabilities'),
      200,
    );
    const provider = providers.find((p) => p.machine_kind === 'sandbox_f')!;
    if (provider.reason !== probingReason) return provider;
    if (Date.now() > until) throw new Error('the micro-VM check did not finish');
    await new Promise((r) => setTimeout(r, 50));
  }
}

// What this host's KVM does with a real guest, asked directly (the same check the server runs).
const kvm = await checkMicroVmHost({ accel: 'kvm' });
const qemuInstalled = existsSync('/usr/bin/qemu-system-x86_64');

describe.each(testDatabases())('sandbox_f micro-VMs on $name', (database) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it.skipIf(kvm.available)(
    'reports sandbox_f unavailable with the reason a real guest run gave, and agent create says it (503)',
    async () => {
      server = await startTestServer(database, { PADDOCK_CONFIG: sandboxF });
      const provider = await microVmProvider(server);
      expect(provider).toMatchObject({ available: false, reason: (kvm as { reason: string }).reason });
      // With QEMU and /dev/kvm present, the verdict comes from running the probe guest, not from files.
      if (qemuInstalled && existsSync('/dev/kvm'))
        expect(provider.reason).toMatch(/^KVM cannot run guests on this host: ./);
      const refused = await json<{ detail: { code: string; message: string } }>(
        await server.request('POST', '/v2/threads', {
          body: { agent: agentSpec({ machine_kind: 'sandbox_f', harness: 'coding_alpha' }) },
        }),
        503,
      );
      expect(refused.detail).toEqual({
        code: 'provider_unavailable',
        message: `sandbox_f cannot run here: ${provider.reason}`,
      });
    },
  );

  // KVM cannot run guests here, so the guest path runs under QEMU's software emulation (TCG), which
  // only this setting turns on. Everything but the CPU's accelerator is what production runs. On one
  // database (a guest run takes minutes): the provider does not touch the store, whose own tests run on both.
  it.skipIf(!qemuInstalled || database.name !== testDatabases()[0]!.name)(
    'runs a thread in a micro-VM under TCG: a turn reading its skill, then code whose files land in the workspace',
    { timeout: 180_000 },
    async () => {
      server = await startTestServer(database, {
        PADDOCK_CONFIG: sandboxF,
        PADDOCK_MICROVM_ACCEL: 'tcg',
      });
      const provider = await microVmProvider(server);
      expect(provider, provider.reason).toMatchObject({ available: true });
      const skillMd = '---\nname: greeter\ndescription: Greets people.\n---\n\n# Greeter\n';
      const files = [
        { path: 'SKILL.md', content: skillMd },
        { path: 'templates/hello.txt', content: 'hello in a micro-VM\n' },
      ];
      await json(
        await server.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }),
        201,
      );
      const { thread_id: threadId } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: {
            agent: agentSpec({
              machine_kind: 'sandbox_f',
              machine_size: 'L',
              harness: 'coding_alpha',
              skills: [{ source: 'registry:default/greeter@1.0.0' }],
            }),
          },
        }),
        201,
      );
      // A whole turn: the VM boots, the supervisor answers over the control port, the harness asks
      // the scripted model through the API port and its tool writes the thread's token to the workspace.
      await json(
        await server.request('POST', `/v2/tasks/${threadId}/inputs`, {
          body: {
            input_id: randomUUID(),
            messages: [
              {
                content: [
                  '::sh echo -n $PADDOCK_TOKEN > token.txt; echo "dir=$PADDOCK_SKILLS_DIR"',
                  'cat $PADDOCK_SKILLS_DIR/greeter/templates/hello.txt',
                  'touch /skills/greeter/x 2>&1 || echo create-refused',
                ].join('; '),
              },
            ],
          },
        }),
        201,
      );
      const turn = await settled(server, threadId, 150_000);
      // A failed turn says why (its error and end events), so a failure under emulation can be read.
      const why = (await allEvents(server, threadId)).filter((e) => ['error', 'turn.ended'].includes(e.type));
      expect(turn.status, JSON.stringify(why)).toBe('idle');
      // The thread's skill, read-only at $PADDOCK_SKILLS_DIR in the guest (a 9p share of its own).
      const shell = (await allEvents(server, threadId)).find((e) => e.type === 'tool_call.end');
      expect(String(shell?.data.output)).toMatch(
        /^dir=\/skills\nhello in a micro-VM\n.*Read-only file system.*create-refused/s,
      );
      const token = await readFile(join(server.dataDir, 'workspaces', threadId, 'token.txt'), 'utf8');
      expect(token).toMatch(/^pdk_thr_/);
      const ran = await json<{ exit_code: number; stdout: string }>(
        await server.request('POST', `/v2/tasks/${threadId}/code/run/sync`, {
          token,
          body: {
            language: 'bash',
            code: [
              'uname -r',
              "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | paste -sd,",
              'id -u',
              'nproc',
              "awk '/MemTotal/ { print int($2 / 1024 / 1024 + 0.5) }' /proc/meminfo",
              'echo from-the-guest > made-inside.txt',
              // Out through the sandbox's egress proxy, over its virtio-serial port: refused by policy.
              'curl -sS https://example.com/ 2>&1 | tail -1',
            ].join('\n'),
            timeout_ms: 60_000,
          },
        }),
        200,
      );
      const [kernel, interfaces, uid, cpus, memoryGiB, egress] = ran.stdout.trim().split('\n');
      expect(egress).toMatch(/CONNECT tunnel failed, response 403/);
      await vi.waitFor(
        async () =>
          expect(
            (await allEvents(server!, threadId)).find((e) => e.type === 'network.request')?.data,
          ).toMatchObject({
            host: 'example.com',
            allowed: false,
          }),
        { timeout: 10_000 },
      );
      // The guest's own kernel (the host runs another), no network interface but loopback. Read from
      // /boot, not by another host check, whose QEMU probe can time out on a busy machine.
      expect(kernel).toBe((await findGuestKernel())?.version);
      expect(interfaces).toBe('lo');
      // As root, the thread's own uid: its workspace's owner.
      const owner = statSync(join(server.dataDir, 'workspaces', threadId)).uid;
      expect(uid).toBe(String(process.getuid?.() === 0 ? owner : process.getuid?.()));
      // Size L: 4 vCPUs and 4 GiB.
      expect([cpus, memoryGiB]).toEqual(['4', '4']);
      const landed = join(server.dataDir, 'workspaces', threadId, 'made-inside.txt');
      expect(await readFile(landed, 'utf8')).toBe('from-the-guest\n');
    },
  );
});
