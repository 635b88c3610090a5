import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer as createHttpServer, type Server } from 'node:http';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { parseAddressRanges } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { EgressRecord } from '../src/egress/egress-proxy.ts';
import { SandboxEgress } from '../src/egress/sandbox-egress.ts';
import { buildSupervisor } from '../src/supervisor-link/build-supervisor.ts';
import { makeTempRoot } from './temp-root.ts';

const temp = await makeTempRoot('sandbox-egress');
let target: Server;
let targetPort: number;

beforeAll(async () => {
  target = createHttpServer((_request, response) => response.end('target answered'));
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.2', resolve));
  targetPort = (target.address() as AddressInfo).port;
});
afterAll(async () => {
  target.close();
  await temp.remove();
});

/** The status line of a CONNECT through the unix socket (what the supervisor passes on). */
async function connectThrough(socketPath: string, host: string, port: number): Promise<string> {
  const socket = connect({ path: socketPath });
  socket.write(`CONNECT ${host}:${port} HTTP/1.1\r\nhost: ${host}:${port}\r\n\r\n`);
  const [chunk] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  return chunk.toString('latin1').split('\r\n')[0]!;
}

describe('a sandbox’s egress proxy', () => {
  it('refuses everything until its thread is known, then decides by the thread’s policy', async () => {
    const registries = vi.fn(async () => ['127.0.0.2']);
    const egress = await SandboxEgress.start(join(temp.path, 'a.sock'), {
      registries,
      domains: [],
      allowAddresses: parseAddressRanges('127.0.0.2'),
    });
    try {
      const records: EgressRecord[] = [];
      expect(await connectThrough(egress.socketPath, '127.0.0.2', targetPort)).toBe('HTTP/1.1 403 Forbidden');
      egress.serve('registries', (record) => records.push(record));
      expect(await connectThrough(egress.socketPath, '127.0.0.2', targetPort)).toBe(
        'HTTP/1.1 200 Connection Established',
      );
      expect(await connectThrough(egress.socketPath, '127.0.0.2', targetPort)).toBe(
        'HTTP/1.1 200 Connection Established',
      );
      // Read once, when first needed.
      expect(registries).toHaveBeenCalledTimes(1);
      await vi.waitFor(() => expect(records).toHaveLength(2));
      expect(records[0]).toMatchObject({ host: '127.0.0.2', port: targetPort, allowed: true });
    } finally {
      await egress.close();
    }
  });

  it('a policy that cannot be built refuses everything, saying why', async () => {
    const egress = await SandboxEgress.start(join(temp.path, 'b.sock'), {
      registries: async () => [],
      domains: [],
      allowAddresses: [],
    });
    try {
      const records: EgressRecord[] = [];
      egress.serve({ allow: ['*.*.example'] }, (record) => records.push(record));
      expect(await connectThrough(egress.socketPath, 'a.b.example', 443)).toBe('HTTP/1.1 403 Forbidden');
      await vi.waitFor(() => expect(records[0]?.reason).toMatch(/^network policy unusable/));
    } finally {
      await egress.close();
    }
  });
});

describe('the supervisor’s egress port', () => {
  it('serves a CONNECT to the sandbox’s own loopback itself and passes every other request to the runner’s proxy', async () => {
    // The runner's proxy, as the supervisor reaches it: here one that answers every request 418.
    const seen: string[] = [];
    const runnerSide = createServer((socket: Socket) => {
      socket.once('data', (chunk: Buffer) => {
        seen.push(chunk.toString('latin1').split('\r\n')[0]!);
        socket.end("HTTP/1.1 418 I'm a teapot\r\ncontent-length: 0\r\n\r\n");
      });
    });
    const socketPath = join(temp.path, 'runner.sock');
    await new Promise<void>((resolve) => runnerSide.listen(socketPath, resolve));
    // Port 8788 is the sandbox's own; here, the host's (sandboxes with a supervisor that serves it
    // have network namespaces of their own).
    const supervisor = spawn(
      await buildSupervisor(join(temp.path, 'supervisor')),
      ['--egress-socket', socketPath],
      {
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const [ready] = (await once(supervisor.stdout!, 'data')) as [Buffer];
    expect(ready.toString()).toContain('"ev":"ready"');
    const local = createHttpServer((_request, response) => response.end('loopback answered'));
    await new Promise<void>((resolve) => local.listen(0, '127.0.0.1', resolve));
    const localPort = (local.address() as AddressInfo).port;
    try {
      const tunnel = connect({ host: '127.0.0.1', port: 8788 });
      tunnel.write(
        `CONNECT 127.0.0.1:${localPort} HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`,
      );
      let answer = '';
      tunnel.on('data', (chunk: Buffer) => {
        answer += chunk.toString('latin1');
      });
      await once(tunnel, 'end');
      expect(answer).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);
      expect(answer).toContain('loopback answered');

      // Anything else is the runner's to decide: another host, another loopback address, a plain request.
      for (const line of [
        'CONNECT registry.example:443 HTTP/1.1',
        `CONNECT 127.0.0.2:${localPort} HTTP/1.1`,
        `CONNECT 127.0.0.1.example.com:443 HTTP/1.1`,
        `GET http://127.0.0.1:${localPort}/ HTTP/1.1`,
      ]) {
        const other = connect({ host: '127.0.0.1', port: 8788 });
        other.write(`${line}\r\nhost: x\r\n\r\n`);
        const [chunk] = (await once(other, 'data')) as [Buffer];
        other.destroy();
        expect(chunk.toString('latin1')).toMatch(/^HTTP\/1\.1 418/);
      }
      expect(seen).toEqual([
        'CONNECT registry.example:443 HTTP/1.1',
        `CONNECT 127.0.0.2:${localPort} HTTP/1.1`,
        'CONNECT 127.0.0.1.example.com:443 HTTP/1.1',
        `GET http://127.0.0.1:${localPort}/ HTTP/1.1`,
      ]);
    } finally {
      supervisor.kill('SIGKILL');
      local.close();
      runnerSide.close();
    }
  });
});
