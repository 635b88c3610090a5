import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSupervisor } from '../src/supervisor-link/build-supervisor.ts';
import type { RemoteProcess } from '../src/supervisor-link/remote-process.ts';
import { SupervisorClient } from '../src/supervisor-link/supervisor-client.ts';
import { makeTempRoot } from './temp-root.ts';

/** Everything the process wrote to stdout and stderr, and how it ended. */
async function outcome(process: RemoteProcess) {
  const collect = async (stream: NodeJS.ReadableStream) => {
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    return text;
  };
  const [stdout, stderr, exit] = await Promise.all([
    collect(process.stdout),
    collect(process.stderr),
    process.exited,
  ]);
  return { stdout, stderr, ...exit };
}

/** Whether the process runs: a zombie (killed, not yet reaped by whoever inherited it) does not. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

describe('the supervisor, as a plain child process', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let client: SupervisorClient;
  let workspace: string;
  let child: ReturnType<typeof spawn>;
  const protocolErrors: string[] = [];

  beforeAll(async () => {
    root = await makeTempRoot('supervisor');
    const main = await buildSupervisor(join(root.path, 'supervisor'));
    workspace = await root.dir('workspace');
    child = spawn(main, [], { stdio: ['pipe', 'pipe', 'inherit'] });
    client = new SupervisorClient({
      input: child.stdin!,
      output: child.stdout!,
      onProtocolError: (reason) => protocolErrors.push(reason),
    });
    await client.ready;
  });

  afterAll(async () => {
    client?.shutdown();
    await new Promise((resolve) => child?.once('exit', resolve));
    await root?.remove();
  });

  it('says it is ready with its pid', async () => {
    expect(await client.ready).toBe(child.pid);
  });

  it("relays a program's stdout and stderr apart, and its exit code", async () => {
    const shell = await client.spawn({
      argv: ['sh', '-c', 'echo out; echo err >&2; exit 3'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: workspace,
    });
    expect(shell.pid).toBeGreaterThan(0);
    expect(await outcome(shell)).toEqual({ stdout: 'out\n', stderr: 'err\n', code: 3, signal: null });
  });

  it('runs in the given directory with exactly the given environment', async () => {
    const shell = await client.spawn({
      argv: ['sh', '-c', 'pwd; env | sort'],
      env: { PATH: '/usr/bin:/bin', SECRET_NAME: 'value' },
      cwd: workspace,
    });
    const { stdout } = await outcome(shell);
    const [dir, ...env] = stdout.trim().split('\n');
    expect(dir).toBe(workspace);
    expect(
      env.filter((line) => !line.startsWith('PWD=') && !line.startsWith('SHLVL=') && !line.startsWith('_=')),
    ).toEqual(['PATH=/usr/bin:/bin', 'SECRET_NAME=value']);
  });

  it('starts a program with no signal ignored or blocked, so a closed pipe ends it as it would anywhere', async () => {
    const shell = await client.spawn({
      argv: ['sh', '-c', 'grep -E "^Sig(Ign|Blk)" /proc/self/status; yes | head -n 1'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: workspace,
    });
    const { stdout, stderr } = await outcome(shell);
    expect(stdout.split('\n')).toEqual(['SigBlk:\t0000000000000000', 'SigIgn:\t0000000000000000', 'y', '']);
    // yes ends on SIGPIPE, silently, rather than failing its write.
    expect(stderr).toBe('');
  });

  it("writes the runner's bytes to a program's stdin, and ends it", async () => {
    const cat = await client.spawn({ argv: ['cat'], env: {}, cwd: workspace, stdin: true });
    cat.stdin.write('first line\n');
    cat.stdin.end(Buffer.from([0xe2, 0x9c, 0x93, 0x0a]));
    expect(await outcome(cat)).toMatchObject({ stdout: 'first line\n✓\n', code: 0 });
  });

  it('signals the whole process group of a program', async () => {
    const shell = await client.spawn({
      argv: ['sh', '-c', 'sleep 300 & echo $!; wait'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: workspace,
    });
    const background = Number((await firstLine(shell)).trim());
    expect(alive(background)).toBe(true);
    shell.signal('SIGTERM');
    expect(await shell.exited).toEqual({ code: null, signal: 'SIGTERM' });
    await until(() => !alive(background));
  });

  it('answers a program that cannot start with its error, and no exit', async () => {
    await expect(
      client.spawn({ argv: ['no-such-program-here'], env: {}, cwd: workspace }),
    ).rejects.toMatchObject({
      code: 'ENOENT',
    });
  });

  it('kills every process a stopped run started, and leaves the others', async () => {
    await client.request({ op: 'run.begin', marker: 'turn-a', kind: 'turn' });
    const spared = await client.spawn({
      argv: ['sleep', '300'],
      env: { PATH: '/usr/bin:/bin' },
      cwd: workspace,
    });
    const shell = await client.spawn({
      argv: ['sh', '-c', 'setsid sleep 301 & echo $!; wait'],
      env: { PATH: '/usr/bin:/bin', PADDOCK_RUN_ID: 'turn-a' },
      cwd: workspace,
    });
    const detached = Number((await firstLine(shell)).trim());
    const { killed } = await client.request({ op: 'run.kill', marker: 'turn-a' });
    expect(killed).toBeGreaterThanOrEqual(2);
    await until(() => !alive(detached));
    expect((await shell.exited).signal).toBe('SIGKILL');
    expect(alive(spared.pid)).toBe(true);
    spared.signal('SIGKILL');
    await spared.exited;
  });

  it('writes a file whole, making its parents, and reads it back', async () => {
    await client.writeFile(workspace, 'notes/today.txt', 'first\n');
    expect(await readFile(join(workspace, 'notes', 'today.txt'), 'utf8')).toBe('first\n');
    await chmod(join(workspace, 'notes', 'today.txt'), 0o755);
    await client.writeFile(workspace, join(workspace, 'notes', 'today.txt'), 'second\n');
    expect((await stat(join(workspace, 'notes', 'today.txt'))).mode & 0o777).toBe(0o755);
    const { data, size } = await client.readFile(workspace, 'notes/today.txt', 3);
    expect({ text: data.toString(), size }).toEqual({ text: 'sec', size: 7 });
    expect(await client.stat(workspace, 'notes')).toEqual({ type: 'directory', size: expect.any(Number) });
    const listing = await client.list(workspace, 'notes');
    expect(listing).toEqual({ entries: [{ name: 'today.txt', type: 'file', size: 7 }], total: 1 });
  });

  it('refuses a path out of its directory, by name or through a link', async () => {
    const outside = await root.dir('outside');
    await writeFile(join(outside, 'secret'), 'not yours');
    await symlink(outside, join(workspace, 'way-out'));
    for (const path of ['../outside/secret', join(outside, 'secret'), 'way-out/secret']) {
      await expect(client.readFile(workspace, path, 100)).rejects.toMatchObject({ code: 'path_refused' });
    }
    await expect(client.writeFile(workspace, 'way-out/new', 'x')).rejects.toMatchObject({
      code: 'path_refused',
    });
    expect(existsSync(join(outside, 'new'))).toBe(false);
    // A link in the workspace to a file in it is followed; the link itself is what a write replaces.
    await writeFile(join(workspace, 'target'), 'kept');
    await symlink('target', join(workspace, 'link'));
    expect((await client.readFile(workspace, 'link', 100)).data.toString()).toBe('kept');
    await client.writeFile(workspace, 'link', 'replaced');
    expect((await lstat(join(workspace, 'link'))).isFile()).toBe(true);
    expect(await readFile(join(workspace, 'target'), 'utf8')).toBe('kept');
    await expect(client.readFile(workspace, 'missing', 100)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('replaces and removes a link itself, wherever it points, never what it points to', async () => {
    const outside = await root.dir('linked-outside');
    await writeFile(join(outside, 'kept.txt'), 'kept');
    await client.symlink(workspace, 'links/out', outside);
    expect(await readlink(join(workspace, 'links', 'out'))).toBe(outside);
    // Made again over the link that leads out (a program's home rewritten at its next start).
    await client.symlink(workspace, 'links/out', join(outside, 'kept.txt'));
    expect(await readlink(join(workspace, 'links', 'out'))).toBe(join(outside, 'kept.txt'));
    await client.remove(workspace, 'links/out');
    expect(existsSync(join(workspace, 'links', 'out'))).toBe(false);
    expect(await readFile(join(outside, 'kept.txt'), 'utf8')).toBe('kept');
    await expect(client.symlink(workspace, '../escape', outside)).rejects.toMatchObject({
      code: 'path_refused',
    });
    await expect(client.remove(workspace, '.')).rejects.toMatchObject({ code: 'path_refused' });
    await expect(client.remove(workspace, 'way-out/secret')).rejects.toMatchObject({ code: 'path_refused' });
  });

  it('leaves nothing half-written when a write fails', async () => {
    await mkdir(join(workspace, 'locked'));
    await writeFile(join(workspace, 'locked', 'file'), 'old');
    await mkdir(join(workspace, 'locked', 'dir'));
    await expect(client.writeFile(workspace, 'locked/dir', 'x')).rejects.toMatchObject({ code: 'EISDIR' });
    const { entries } = await client.list(workspace, 'locked');
    expect(entries.map((entry) => entry.name)).toEqual(['dir', 'file']);
  });
});

describe('the runner end of the link', () => {
  it('breaks the link off at a frame that is not of the protocol, failing what waits', async () => {
    const { PassThrough } = await import('node:stream');
    const output = new PassThrough();
    const reasons: string[] = [];
    const client = new SupervisorClient({
      input: new PassThrough(),
      output,
      onProtocolError: (reason) => reasons.push(reason),
    });
    output.write('{"ev":"ready","pid":7}\n');
    expect(await client.ready).toBe(7);
    const waiting = client.request({ op: 'file.stat', within: '/w', path: 'x' });
    output.write('{"re":1,"ok":{"type":"file","size":-1}}\n');
    await expect(waiting).rejects.toThrow('malformed result');
    expect(reasons).toEqual(['a malformed answer to file.stat']);
    await expect(client.request({ op: 'file.stat', within: '/w', path: 'x' })).rejects.toThrow(
      'sandbox_protocol_error',
    );
  });
});

function firstLine(process: RemoteProcess): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString();
      if (!text.includes('\n')) return;
      process.stdout.off('data', onData);
      resolve(text);
    };
    process.stdout.on('data', onData);
  });
}

/** Waits for a condition the kernel settles a moment after the event (a killed process's exit). */
async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('the condition never held');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
