import { existsSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiProxy, startApiProxy } from '../src/api-proxy.ts';
import { type BwrapProvider, createBwrapProvider } from '../src/bwrap/bwrap-provider.ts';
import { nodeInSandbox } from '../src/code-paths.ts';
import { sandboxLimits } from '../src/limits.ts';
import type { SandboxProcess, SandboxSize } from '../src/provider.ts';
import { sandboxEtcEntries } from '../src/sandbox-etc.ts';
import { defaultUidRange } from '../src/workspaces/uid-claims.ts';
import { Workspaces } from '../src/workspaces/workspaces.ts';
import { cmdlineOf, pidsWithMarker } from './host-processes.ts';
import { configure, runScript } from './run-script.ts';
import { makeTempRoot, removeCgroupParent, testCgroupParent } from './temp-root.ts';
import { startTestServer, type TestServer } from './test-server.ts';

const cgroupMount = '/sys/fs/cgroup';
const cgroupParent = testCgroupParent('bwrap');
const projectRoot = join(import.meta.dirname, '..', '..', '..');
const nodeInside = nodeInSandbox(process.execPath);

describe.skipIf(!existsSync('/usr/bin/bwrap'))('bwrap provider', () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  let provider: BwrapProvider;
  let server: TestServer;
  let proxy: ApiProxy;
  let sandbox: SandboxProcess;
  let workspace: string;
  let workspaces: Workspaces;
  /** The program cache's root on the host (ProgramCache), shown read-only at /opt/paddock/harnesses. */
  let harnessDir: string;
  const booted: SandboxProcess[] = [];

  async function boot(
    spec: {
      workspaceDir?: string;
      env?: Record<string, string>;
      size?: SandboxSize;
      configure?: boolean;
    } = {},
  ): Promise<SandboxProcess> {
    const workspaceDir = spec.workspaceDir ?? (await root.dir(`ws-${booted.length}`));
    const { uid } = await workspaces.ensure(workspaceDir, spec.size ?? 'S');
    const created = await provider.create({
      id: `t${booted.length}-${Date.now()}`,
      workspaceDir,
      uid,
      size: spec.size ?? 'S',
      apiSocket: proxy.socketPath,
    });
    booted.push(created);
    if (spec.configure !== false) {
      const env = {
        PADDOCK_API_URL: `http://127.0.0.1:${server.port}`,
        PADDOCK_TOKEN: 'pdk_thr_test',
        ...spec.env,
      };
      configure(created, provider.sandboxEnv(workspaceDir, env, spec.size ?? 'S'));
    }
    return created;
  }

  beforeAll(async () => {
    root = await makeTempRoot('bwrap');
    workspaces = new Workspaces({
      stateDir: await root.dir('workspace-state'),
      uids: process.getuid?.() === 0 ? defaultUidRange : undefined,
    });
    // Not made here: the provider makes it (open to the sandbox uids) before the first boot.
    harnessDir = join(root.path, 'harnesses');
    provider = await createBwrapProvider({
      stateDir: await root.dir('state'),
      cgroups: { mount: cgroupMount, parent: cgroupParent },
      harnessDir,
    });
    await mkdir(join(harnessDir, 'early'), { mode: 0o755 });
    await writeFile(join(harnessDir, 'early', 'installed.txt'), 'before boot\n', { mode: 0o644 });
    server = await startTestServer();
    proxy = await startApiProxy({
      socketPath: join(root.path, 'proxy', 'api.sock'),
      target: { host: '127.0.0.1', port: server.port },
    });
    workspace = await root.dir('workspace');
    sandbox = await boot({ workspaceDir: workspace, env: { MY_SECRET: 's3cret-value' } });
  });

  afterAll(async () => {
    await Promise.all(booted.map((each) => each.destroy()));
    await provider?.close();
    await proxy?.close();
    await server?.close();
    await workspaces?.close();
    await root?.remove();
    await removeCgroupParent(cgroupMount, cgroupParent);
  });

  it("boots to ready and runs as its workspace's unprivileged uid with no capabilities", async () => {
    expect(sandbox.pid).toBeGreaterThan(0);
    const run = await runScript(
      sandbox,
      'id -u; id -g; id -un; grep CapEff /proc/self/status; grep NoNewPrivs /proc/self/status',
    );
    const uid = (await stat(workspace)).uid;
    const user = process.getuid?.() === 0 ? 'sandbox' : '\\S+';
    expect(run.stdout).toMatch(
      new RegExp(`^${uid}\\n${uid}\\n${user}\\nCapEff:\\s+0+\\nNoNewPrivs:\\s+1\\n$`),
    );
    if (process.getuid?.() === 0) expect(uid).toBeGreaterThanOrEqual(defaultUidRange.base);
  });

  it('shows the program cache read-only, with what is installed after the sandbox booted', async () => {
    const before = await runScript(
      sandbox,
      [
        'echo "$PADDOCK_HARNESS_DIR"',
        'cat "$PADDOCK_HARNESS_DIR/early/installed.txt"',
        'touch "$PADDOCK_HARNESS_DIR/x" 2>/dev/null || echo read-only',
        'echo y >> "$PADDOCK_HARNESS_DIR/early/installed.txt" 2>/dev/null || echo file-read-only',
      ].join('; '),
    );
    expect(before.stdout).toBe('/opt/paddock/harnesses\nbefore boot\nread-only\nfile-read-only\n');
    // The first ACP turn installs a program into the cache after a standby sandbox booted.
    await mkdir(join(harnessDir, 'late', 'bin'), { recursive: true, mode: 0o755 });
    await writeFile(join(harnessDir, 'late', 'bin', 'agent'), '#!/bin/sh\necho agent ran as $(id -u)\n', {
      mode: 0o755,
    });
    const after = await runScript(sandbox, '/opt/paddock/harnesses/late/bin/agent');
    expect(after.stdout).toBe(`agent ran as ${(await stat(workspace)).uid}\n`);
    expect(await readFile(join(harnessDir, 'early', 'installed.txt'), 'utf8')).toBe('before boot\n');
  });

  it('gives a writable /workspace that persists between commands and lands in the host directory', async () => {
    expect((await runScript(sandbox, 'pwd; echo persisted > note.txt')).stdout).toBe('/workspace\n');
    expect((await runScript(sandbox, 'cat /workspace/note.txt')).stdout).toBe('persisted\n');
    expect(await readFile(join(workspace, 'note.txt'), 'utf8')).toBe('persisted\n');
    expect((await stat(join(workspace, 'note.txt'))).uid).toBe((await stat(workspace)).uid);
  });

  it('keeps /usr and /etc read-only', async () => {
    const run = await runScript(
      sandbox,
      'touch /usr/x 2>/dev/null || echo usr-ro; echo x >> /etc/passwd 2>/dev/null || echo etc-ro',
    );
    expect(run.stdout).toBe('usr-ro\netc-ro\n');
  });

  it('has working bash, python3 and git, and a writable /tmp', async () => {
    const run = await runScript(
      sandbox,
      'python3 -c "print(6*7)" && git --version >/dev/null && echo ok > /tmp/t && cat /tmp/t',
    );
    expect(run).toMatchObject({ exitCode: 0, stdout: '42\nok\n' });
  });

  it('cannot see sibling workspaces, the data dir or the project root', async () => {
    const other = await root.dir('other-thread');
    await writeFile(join(other, 'secret.txt'), 'other thread');
    const dataDir = await root.dir('.paddock');
    await writeFile(join(dataDir, 'paddock.db'), 'database');
    const hidden = [
      other,
      dataDir,
      root.path,
      join(projectRoot, 'package.json'),
      join(projectRoot, '.paddock'),
    ];
    const probes = hidden.map((path) => `test -e '${path}' && echo visible: ${path}`);
    const run = await runScript(sandbox, `${probes.join('; ')}; true`);
    expect(run.stdout).toBe('');
  });

  it("shows only the supervisor and Node at /opt/paddock, no node_modules, nothing of the host's checkout", async () => {
    const run = await runScript(
      sandbox,
      [
        `test -e '${projectRoot}' && echo checkout visible`,
        'ls /opt/paddock',
        'test -x /opt/paddock/supervisor/paddock-supervisor && echo supervisor',
        'touch /opt/paddock/supervisor/x 2>/dev/null || echo read-only',
        `'${nodeInside}' -e 'console.log(process.execPath)'`,
        'grep -c node_modules /proc/self/mountinfo',
        `grep -c '${projectRoot}' /proc/self/mountinfo`,
      ].join('; '),
    );
    expect(run.stdout).toBe(`harnesses\nnode\nsupervisor\nsupervisor\nread-only\n${nodeInside}\n0\n0\n`);
    expect(nodeInside.startsWith('/opt/paddock/') || nodeInside.startsWith('/usr/')).toBe(true);
  });

  it('has a generated /etc: two users, loopback names, CA certificates, nothing else of the host', async () => {
    const run = await runScript(
      sandbox,
      [
        'ls -A /etc',
        'cut -d: -f1 /etc/passwd',
        'getent hosts sandbox',
        `python3 -c "import ssl; print(ssl.create_default_context().cert_store_stats()['x509_ca'] > 0)"`,
        "echo a b | awk '{print $2}'",
        'which git',
      ].join('; '),
    );
    expect(run.stdout).toBe(
      `${[...sandboxEtcEntries].sort().join('\n')}\nroot\nsandbox\n127.0.0.1       localhost sandbox\nTrue\nb\n/usr/bin/git\n`,
    );
  });

  it('refuses user namespaces and what container runtimes refuse, and ordinary work still runs', async () => {
    const probes = [
      'import ctypes, os',
      'libc = ctypes.CDLL("libc.so.6", use_errno=True)',
      'def errno(nr, *args):',
      '    ctypes.set_errno(0)',
      '    result = libc.syscall(nr, *args)',
      '    return os.strerror(ctypes.get_errno()) if result == -1 else "allowed"',
      // mount, umount2, keyctl, add_key, bpf, perf_event_open, unshare(CLONE_NEWNS), unshare(CLONE_NEWUSER),
      // clone(CLONE_NEWUSER), setns, userfaultfd, io_uring_setup, clone3.
      'calls = [(165, b"none", b"/tmp", b"tmpfs", 0, None), (166, b"/tmp", 0), (250, 0, 0), (248, b"user", b"k", None, 0, -2),',
      '         (321, 0, None, 0), (298, None, 0, -1, -1, 0), (272, 0x20000), (272, 0x10000000),',
      '         (56, 0x10000000 | 17, None, None, None, 0), (308, 0, 0), (323, 0), (425, 1, None), (435, None, 0)]',
      'print(" ".join(errno(*call).split()[0] for call in calls))',
    ].join('\n');
    const run = await runScript(
      sandbox,
      [
        'unshare -Ur true 2>/dev/null && echo userns allowed',
        'unshare -m true 2>/dev/null && echo mountns allowed',
        `python3 -c '${probes}'`,
        'grep Seccomp: /proc/self/status',
        // Threads (clone3 refused, then clone), a background process, ps, node, git.
        `python3 -c "import threading; t = threading.Thread(target=print, args=('thread',)); t.start(); t.join()"`,
        'sleep 30 & ps -e -o comm= | grep -c sleep; kill %1',
        `${nodeInside} -e "console.log(require('node:os').cpus().length > 0)"`,
        'git init -q /tmp/repo && cd /tmp/repo && echo x > f && git add f && git -c user.name=a -c user.email=a@b commit -qm one && git rev-list --count HEAD',
      ].join('; '),
    );
    expect(run.stdout).toBe(`${'Operation '.repeat(12)}Function\nSeccomp:\t2\nthread\n1\ntrue\n1\n`);
  });

  it('kills a process that makes a system call through another ABI (x32)', async () => {
    const run = await runScript(
      sandbox,
      'python3 -c "import ctypes; ctypes.CDLL(None).syscall(0x40000000 | 39); print("survived")"; echo $?',
    );
    // 128 + SIGSYS.
    expect(run.stdout).toBe('159\n');
  });

  it('hands the env to the sandbox, but keeps secrets off the host process list', async () => {
    const run = await runScript(
      sandbox,
      'echo "$MY_SECRET $PADDOCK_TOKEN $PADDOCK_API_URL $HOME $PADDOCK_WORKSPACE"; env | grep -c NODE_COMPILE_CACHE',
    );
    expect(run.stdout).toBe('s3cret-value pdk_thr_test http://127.0.0.1:8787 /workspace /workspace\n0\n');
    const leaks = pidsWithMarker('s3cret-value').map(cmdlineOf);
    expect(leaks).toEqual([]);
  });

  it("keeps the secrets out of the supervisor's own environment, which its processes cannot read", async () => {
    // The script's parent is the supervisor.
    const run = await runScript(
      sandbox,
      'tr "\\0" " " < /proc/$PPID/cmdline; echo; cat /proc/$PPID/environ >/dev/null 2>&1 && echo read || echo refused',
    );
    const [cmdline, environ] = run.stdout.trimEnd().split('\n');
    expect(cmdline).toContain('supervisor/paddock-supervisor --api-socket /run/paddock/api.sock');
    expect(cmdline).not.toContain('s3cret-value');
    expect(environ).toBe('refused');
    // Seen from the host (root reads any process's): the supervisors' own environment holds no secret.
    const supervisors = pidsWithMarker('supervisor/paddock-supervisor');
    expect(supervisors.length).toBeGreaterThan(0);
    for (const pid of supervisors) {
      const outside = await readFile(`/proc/${pid}/environ`, 'utf8').catch(() => '');
      expect(outside).not.toContain('s3cret-value');
      expect(outside).not.toContain('PADDOCK_TOKEN');
    }
  });

  it('has no network but the proxy to the Paddock server', async () => {
    const direct = await runScript(sandbox, `exec 3<>/dev/tcp/127.0.0.1/${server.port} && echo connected`);
    expect(direct.stdout).toBe('');
    expect(direct.exitCode).not.toBe(0);
    const viaProxy = await runScript(
      sandbox,
      `exec 3<>/dev/tcp/127.0.0.1/8787; printf 'GET /hello HTTP/1.0\\r\\nHost: sandbox\\r\\n\\r\\n' >&3; cat <&3`,
    );
    expect(viaProxy.stdout).toContain('200 OK');
    expect(viaProxy.stdout).toContain('hello from the host');
    const node = await runScript(
      sandbox,
      `'${nodeInside}' -e 'fetch(process.env.PADDOCK_API_URL + "/hello").then(r => r.text()).then(t => process.stdout.write(t))'`,
    );
    expect(node.stdout).toBe('hello from the host\n');
  });

  it('reports a failing script and keeps working', async () => {
    const failed = await runScript(sandbox, 'echo before; echo oops >&2; exit 7');
    expect(failed).toEqual({ stdout: 'before\n', stderr: 'oops\n', exitCode: 7 });
    expect((await runScript(sandbox, 'echo still here')).stdout).toBe('still here\n');
  });

  // Each size's limits, each exceeded by a process: memory (killed), processes (fork refused), CPU.
  // L allocates 4.5 GiB and then 3.75 GiB: about 30 s of page faults on this machine alone.
  it.for(['S', 'M', 'L'] as const)(
    'kills a memory hog past the %s-size limit',
    { timeout: 90_000 },
    async (size, context) => {
      if (!provider.cgroups) context.skip();
      const hog = await boot({ size });
      const limitMiB = sandboxLimits[size].memoryBytes / 1024 ** 2;
      const run = await runScript(
        hog,
        `python3 -c "b = b'x' * (${limitMiB + 512} * 1024 * 1024); print('survived')"`,
      );
      expect(run.stdout).toBe('');
      expect(run.exitCode).toBe(137);
      // Below the limit the same allocation succeeds: the limit, not the host, killed it.
      const fits = await runScript(
        hog,
        `python3 -c "b = b'x' * (${limitMiB - 256} * 1024 * 1024); print('fits')"`,
      );
      expect(fits.stdout).toBe('fits\n');
      // Node sees the host's memory, not the sandbox's: it is told to keep its old generation to
      // half the sandbox's (the young one adds 192 MiB here), so V8 collects before the limit kills.
      const heap = await runScript(
        hog,
        `'${nodeInside}' -e 'console.log(require("v8").getHeapStatistics().heap_size_limit / 1024 ** 2)'`,
      );
      expect(Number(heap.stdout) - limitMiB / 2).toBeGreaterThan(0);
      expect(Number(heap.stdout) - limitMiB / 2).toBeLessThanOrEqual(192);
      await hog.destroy();
    },
  );

  it("lets the thread's own NODE_OPTIONS replace the heap size it is given", async () => {
    const own = await boot({ env: { NODE_OPTIONS: '--max-old-space-size=300 --max-semi-space-size=1' } });
    const heap = await runScript(
      own,
      `'${nodeInside}' -e 'console.log(require("v8").getHeapStatistics().heap_size_limit / 1024 ** 2)'`,
    );
    expect(Number(heap.stdout)).toBe(303);
    await own.destroy();
  });

  it.for(['S', 'M', 'L'] as const)(
    'caps the number of processes of an %s-size sandbox',
    async (size, context) => {
      if (!provider.cgroups) context.skip();
      const forker = await boot({ size });
      const limit = sandboxLimits[size].pids;
      // Python, not bash: bash retries a refused fork with growing pauses.
      const forkUntilRefused = [
        'import os, time',
        'n = 0',
        'try:',
        `    for _ in range(${limit + 50}):`,
        '        if os.fork() == 0:',
        '            time.sleep(30)',
        '            os._exit(0)',
        '        n += 1',
        'except OSError as error:',
        '    print(n, error.errno)',
      ].join('\n');
      const run = await runScript(forker, `python3 -c '${forkUntilRefused}'`);
      const [forked, errno] = run.stdout.trim().split(' ').map(Number);
      expect(forked).toBeLessThan(limit);
      expect(forked).toBeGreaterThan(limit - 20);
      expect(errno).toBe(11);
      await forker.destroy();
    },
  );

  it('holds an S-size sandbox to one CPU however many processes spin', async (context) => {
    if (!provider.cgroups) context.skip();
    const spinner = await boot({ size: 'S' });
    // Two busy processes for a second of wall time: without the limit they would use two CPUs
    // on this two-core host; with it, together about one.
    const script = [
      'import os, time, resource',
      'start = time.time()',
      'pids = []',
      'for _ in range(2):',
      '    pid = os.fork()',
      '    if pid == 0:',
      '        end = time.time() + 1.5',
      '        while time.time() < end: pass',
      '        os._exit(0)',
      '    pids.append(pid)',
      'for pid in pids: os.waitpid(pid, 0)',
      'usage = resource.getrusage(resource.RUSAGE_CHILDREN)',
      'print(round((usage.ru_utime + usage.ru_stime) / (time.time() - start), 2))',
    ].join('\n');
    const run = await runScript(spinner, `python3 -c '${script}'`);
    expect(Number(run.stdout.trim())).toBeLessThan(1.25);
    await spinner.destroy();
  });

  it('leaves no process and no cgroup behind after destroy', async () => {
    const doomed = await boot();
    const marker = `paddock-leak-${process.pid}-${Date.now()}`;
    await runScript(
      doomed,
      `(exec -a ${marker} sleep 1000 &); setsid bash -c 'exec -a ${marker} sleep 1001' & sleep 0.1`,
    );
    expect(pidsWithMarker(marker).length).toBe(2);
    await doomed.destroy();
    expect(await doomed.exited).toBeDefined();
    expect(pidsWithMarker(marker)).toEqual([]);
    for (const controller of ['memory', 'cpu', 'pids', 'freezer']) {
      expect(existsSync(join(cgroupMount, controller, cgroupParent, doomed.id))).toBe(false);
    }
  });
});
