import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { containerConfig } from '../src/docker/container-config.ts';
import { demuxStream } from '../src/docker/demux.ts';
import { parseDockerHost } from '../src/docker/engine.ts';
import { sandboxLimits } from '../src/limits.ts';

function frame(stream: 1 | 2, text: string): Buffer {
  const payload = Buffer.from(text);
  const header = Buffer.alloc(8);
  header[0] = stream;
  header.writeUInt32BE(payload.length, 4);
  return Buffer.concat([header, payload]);
}

async function collect(stream: PassThrough): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  return text;
}

describe('Docker engine client', () => {
  it('reads DOCKER_HOST as a unix socket or plain TCP, and refuses the rest', () => {
    expect(parseDockerHost('unix:///var/run/docker.sock')).toEqual({ socketPath: '/var/run/docker.sock' });
    expect(parseDockerHost('tcp://127.0.0.1:2375')).toEqual({ host: '127.0.0.1', port: 2375 });
    expect(parseDockerHost('tcp://[::1]')).toEqual({ host: '::1', port: 2375 });
    expect(() => parseDockerHost('ssh://me@host')).toThrow(/only unix:\/\/ and tcp:\/\//);
    expect(() => parseDockerHost('unix://relative.sock')).toThrow(/absolute/);
  });

  it('splits the attach stream into stdout and stderr, however the frames are cut', async () => {
    const source = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    demuxStream(source, stdout, stderr);
    const bytes = Buffer.concat([frame(1, '{"type":"ready"}\n'), frame(2, 'warning\n'), frame(1, 'tail\n')]);
    // One byte at a time: headers and payloads split across chunks.
    for (let at = 0; at < bytes.length; at++) source.write(bytes.subarray(at, at + 1));
    source.end();
    expect(await collect(stdout)).toBe('{"type":"ready"}\ntail\n');
    expect(await collect(stderr)).toBe('warning\n');
  });

  it('configures a container without network, capabilities or a writable image, code read-only', () => {
    const config = containerConfig({
      image: 'paddock-sandbox:bookworm',
      id: 'thread-1',
      runnerKey: 'abc',
      command: [
        '/opt/paddock/node_modules/node/bin/node',
        '/opt/paddock/packages/sandbox/src/supervisor/main.ts',
      ],
      env: { PATH: '/usr/bin:/bin' },
      uid: 65534,
      workspaceDir: '/data/workspaces/thread-1',
      code: [
        { host: '/code/packages', inside: '/opt/paddock/packages' },
        { host: '/code/node_modules', inside: '/opt/paddock/node_modules' },
      ],
      apiSocket: '/data/sandboxes-docker/api-proxy/api.sock',
      limits: sandboxLimits.L,
    }) as { User: string; Env: string[]; HostConfig: Record<string, unknown> };
    expect(config.User).toBe('65534:65534');
    expect(config.Env).toEqual(['PATH=/usr/bin:/bin']);
    expect(config.HostConfig).toMatchObject({
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Memory: 4 * 1024 ** 3,
      MemorySwap: 4 * 1024 ** 3,
      CpuQuota: 400_000,
      PidsLimit: 1024,
      LogConfig: { Type: 'none', Config: {} },
      Binds: [
        '/code/packages:/opt/paddock/packages:ro',
        '/code/node_modules:/opt/paddock/node_modules:ro',
        '/data/sandboxes-docker/api-proxy/api.sock:/run/paddock/api.sock:ro',
        '/data/workspaces/thread-1:/workspace',
      ],
    });
  });
});
