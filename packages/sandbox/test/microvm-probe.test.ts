import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { probeAccel } from '../src/microvm/accel-probe.ts';
import { cpioArchive } from '../src/microvm/cpio.ts';
import { moduleLoadOrder } from '../src/microvm/guest-kernel.ts';
import { encodeFrame, frameDecoder, frameType } from '../src/microvm/port-frames.ts';
import { servePort } from '../src/microvm/serve-port.ts';

const qemu = '/usr/bin/qemu-system-x86_64';

describe('the micro-VM accelerator probe', () => {
  // The probe can say yes: under QEMU's software emulation the probe guest runs to its exit port.
  // (Its deadline here is long: how fast QEMU starts on a busy machine is the benchmark's business.)
  it.skipIf(!existsSync(qemu))('says yes when the guest runs to its end (TCG)', async () => {
    const result = await probeAccel({ qemuPath: qemu, accel: 'tcg', timeoutMs: 15_000 });
    expect(result).toMatchObject({ ok: true });
  });

  // Whatever this host's KVM does, the verdict comes from the guest run, and a no quotes QEMU.
  it.skipIf(!existsSync(qemu) || !existsSync('/dev/kvm'))(
    'gives KVM a verdict from a real guest run',
    async () => {
      const result = await probeAccel({ qemuPath: qemu, accel: 'kvm', timeoutMs: 15_000 });
      if (!result.ok) expect(result.reason).toMatch(/^KVM cannot run guests on this host: ./);
    },
  );

  it('says no, with the guest unfinished at its deadline, and with QEMU missing', async () => {
    const slow = await probeAccel({ qemuPath: qemu, accel: 'tcg', timeoutMs: 1 });
    if (existsSync(qemu))
      expect(slow).toMatchObject({ ok: false, reason: expect.stringMatching(/did not finish within 1 ms/) });
    expect(await probeAccel({ qemuPath: '/nonexistent/qemu', accel: 'kvm' })).toMatchObject({
      ok: false,
      reason: '/nonexistent/qemu is not installed',
    });
  });
});

describe('micro-VM pieces', () => {
  it('orders kernel modules after what they depend on', () => {
    const dep = [
      'kernel/fs/9p/9p.ko: kernel/net/9p/9pnet.ko kernel/fs/fscache/fscache.ko kernel/fs/netfs/netfs.ko',
      'kernel/fs/netfs/netfs.ko:',
      'kernel/fs/fscache/fscache.ko: kernel/fs/netfs/netfs.ko',
      'kernel/net/9p/9pnet.ko:',
      'kernel/drivers/virtio/virtio.ko: kernel/drivers/virtio/virtio_ring.ko',
      'kernel/drivers/virtio/virtio_ring.ko:',
      'kernel/net/9p/9pnet_virtio.ko: kernel/net/9p/9pnet.ko kernel/drivers/virtio/virtio.ko kernel/drivers/virtio/virtio_ring.ko',
    ].join('\n');
    const order = moduleLoadOrder(dep, ['9pnet_virtio', '9p'])!;
    const at = (name: string) => order.findIndex((file) => file.endsWith(`/${name}.ko`));
    expect(order).toHaveLength(7);
    expect(at('virtio_ring')).toBeLessThan(at('virtio'));
    expect(at('virtio')).toBeLessThan(at('9pnet_virtio'));
    expect(at('netfs')).toBeLessThan(at('fscache'));
    expect(at('fscache')).toBeLessThan(at('9p'));
    expect(moduleLoadOrder(dep, ['virtio_console'])).toBeUndefined();
  });

  it.skipIf(!existsSync('/usr/bin/cpio'))('writes a newc archive that cpio reads back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-cpio-'));
    try {
      const archive = join(dir, 'a.cpio');
      writeFileSync(
        archive,
        cpioArchive([
          { path: 'bin', type: 'dir' },
          { path: 'bin/hello', type: 'file', data: Buffer.from('hi\n'), mode: 0o755 },
          { path: 'link', type: 'symlink', target: 'bin/hello' },
        ]),
      );
      const listing = execFileSync('cpio', ['-itv', '-F', archive], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      expect(listing).toMatch(/^drwxr-xr-x .* bin$/m);
      expect(listing).toMatch(/^-rwxr-xr-x .* 3 .* bin\/hello$/m);
      expect(listing).toMatch(/^lrwxrwxrwx .* link -> bin\/hello$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('carries connections over one byte stream to the API proxy socket, both halves', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'paddock-port-'));
    const apiSocket = join(dir, 'api.sock');
    // The "API": echoes upper-cased, then ends its half once the client ended its own.
    const api = createServer({ allowHalfOpen: true }, (socket) => {
      let got = '';
      socket.on('data', (data) => {
        got += data.toString();
      });
      socket.on('end', () => socket.end(got.toUpperCase()));
    });
    await new Promise<void>((resolve) => api.listen(apiSocket, resolve));
    const portPath = join(dir, 'port.sock');
    const port = createServer((host) => servePort(host, apiSocket));
    await new Promise<void>((resolve) => port.listen(portPath, resolve));
    const guest: Socket = connect(portPath);
    const answers = new Map<number, string>();
    const ended = new Set<number>();
    guest.on(
      'data',
      frameDecoder((type, stream, payload) => {
        if (type === frameType.data) answers.set(stream, (answers.get(stream) ?? '') + payload.toString());
        if (type === frameType.end) ended.add(stream);
      }),
    );
    for (const stream of [1, 2]) {
      guest.write(encodeFrame(frameType.open, stream));
      guest.write(encodeFrame(frameType.data, stream, Buffer.from(`stream ${stream}`)));
      guest.write(encodeFrame(frameType.end, stream));
    }
    const until = Date.now() + 5_000;
    while (ended.size < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(Object.fromEntries(answers)).toEqual({ 1: 'STREAM 1', 2: 'STREAM 2' });
    guest.destroy();
    port.close();
    api.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
