import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { buildSupervisor } from '../src/supervisor-link/build-supervisor.ts';
import type { RemoteProcess } from '../src/supervisor-link/remote-process.ts';
import { SupervisorClient } from '../src/supervisor-link/supervisor-client.ts';
import { type DialedLink, SupervisorDialIns } from '../src/supervisor-link/supervisor-dial-ins.ts';
import { makeTempRoot } from './temp-root.ts';

async function stdoutOf(process: RemoteProcess): Promise<string> {
  let text = '';
  for await (const chunk of process.stdout) text += chunk.toString();
  await process.exited;
  return text;
}

const exitOf = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code)),
  );

/**
 * The supervisor's link over a WebSocket it dials out (how a pod's supervisor reaches Paddock, with
 * no runner beside it): a `ws` server on loopback hands each connection to `SupervisorDialIns`, and
 * the real supervisor dials it with Node's own WebSocket client.
 */
describe('a supervisor that dials out over a WebSocket', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let main: string;
  let server: WebSocketServer;
  let url: string;
  const dialIns = new SupervisorDialIns();
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    root = await makeTempRoot('dial-out');
    main = await buildSupervisor(join(root.path, 'supervisor'));
    server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    server.on('connection', (socket, request) => {
      const sandboxId = /^\/supervisors\/([\w-]+)\/link$/.exec(request.url ?? '')?.[1];
      if (sandboxId) dialIns.accept(socket, sandboxId);
      else socket.close(1008);
    });
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    await new Promise((resolve) => server?.close(resolve));
    await root?.remove();
  });

  /** Starts a supervisor that dials in as `sandboxId` with the token written to its token file. */
  async function startSupervisor(sandboxId: string, token: string): Promise<ChildProcess> {
    const tokenFile = join(root.path, `${sandboxId}-${children.length}.token`);
    await writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
    const flags = ['--connect', `${url}/supervisors/${sandboxId}/link`, '--token-file', tokenFile];
    const child = spawn(main, flags, { stdio: ['ignore', 'ignore', 'pipe'] });
    children.push(child);
    return child;
  }

  function clientOver(link: DialedLink): SupervisorClient {
    return new SupervisorClient({
      input: link.input,
      output: link.output,
      onProtocolError: (reason) => {
        throw new Error(reason);
      },
    });
  }

  it('serves requests over the connection it dialled, and ends when it closes', async () => {
    const token = randomBytes(24).toString('base64url');
    const linked = dialIns.expect('sandbox-one', token, 10_000);
    const child = await startSupervisor('sandbox-one', token);
    const client = clientOver(await linked);
    expect(await client.ready).toBe(child.pid);

    const workspace = await root.dir('workspace-one');
    const shell = await client.spawn({
      argv: ['sh', '-c', 'echo "$GREETING from $(pwd)"; cat /proc/$PPID/cmdline | tr "\\0" " "'],
      env: { PATH: '/usr/bin:/bin', GREETING: 'hello' },
      cwd: workspace,
    });
    const said = await stdoutOf(shell);
    expect(said).toContain(`hello from ${workspace}`);
    // The supervisor's command line names the token's file, never the token.
    expect(said).toContain('--token-file');
    expect(said).not.toContain(token);

    await client.writeFile(workspace, 'notes/a.txt', 'written over the WebSocket');
    expect(await readFile(join(workspace, 'notes/a.txt'), 'utf8')).toBe('written over the WebSocket');
    expect((await client.readFile(workspace, 'notes/a.txt', 1024)).data.toString()).toBe(
      'written over the WebSocket',
    );

    // Paddock's end of the link goes: the supervisor ends too, as when its pipe closes.
    (await linked).close();
    expect(await exitOf(child)).toBe(0);
  });

  it('refuses a connection with the wrong token, and still takes the right one after it', async () => {
    const token = randomBytes(24).toString('base64url');
    const linked = dialIns.expect('sandbox-two', token, 10_000);
    const impostor = await startSupervisor('sandbox-two', randomBytes(24).toString('base64url'));
    // Refused: its link closes before it served anything, and it ends.
    expect(await exitOf(impostor)).toBe(0);

    const child = await startSupervisor('sandbox-two', token);
    const client = clientOver(await linked);
    expect(await client.ready).toBe(child.pid);
    client.shutdown();
    expect(await exitOf(child)).toBe(0);
  });

  it('takes a token for one link only: a second supervisor with it is refused', async () => {
    const token = randomBytes(24).toString('base64url');
    const linked = dialIns.expect('sandbox-three', token, 10_000);
    const first = await startSupervisor('sandbox-three', token);
    const client = clientOver(await linked);
    await client.ready;
    const second = await startSupervisor('sandbox-three', token);
    expect(await exitOf(second)).toBe(0);
    // The first link still serves.
    const echo = await client.spawn({ argv: ['echo', 'still here'], env: {}, cwd: root.path });
    expect(await stdoutOf(echo)).toBe('still here\n');
    client.shutdown();
    await exitOf(first);
  });

  it('gives up on a supervisor that never dials in', async () => {
    await expect(dialIns.expect('sandbox-never', randomBytes(24).toString('base64url'), 50)).rejects.toThrow(
      'did not dial in within 50 ms',
    );
  });

  it('fails at once, saying why, when there is nothing to dial', async () => {
    const tokenFile = join(root.path, 'unreachable.token');
    await writeFile(tokenFile, randomBytes(24).toString('base64url'), { mode: 0o600 });
    const closed = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => closed.once('listening', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const child = spawn(
      main,
      ['--connect', `ws://127.0.0.1:${port}/supervisors/x/link`, '--token-file', tokenFile],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    expect(await exitOf(child)).toBe(1);
    expect(stderr).toContain(`could not dial ws://127.0.0.1:${port}/supervisors/x/link`);
  });
});
