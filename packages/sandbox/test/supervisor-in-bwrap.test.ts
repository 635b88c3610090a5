import { existsSync, realpathSync } from 'node:fs';
import { chown, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bwrapArgs } from '../src/bwrap/bwrap-args.ts';
import { type BwrapLauncher, spawnBwrap } from '../src/bwrap/bwrap-launch.ts';
import { sandboxUserArgs } from '../src/bwrap/sandbox-user.ts';
import { sandboxSeccompFilter } from '../src/bwrap/seccomp-filter.ts';
import { ReadOnlyViews } from '../src/read-only-views.ts';
import { buildSandboxEtc } from '../src/sandbox-etc.ts';
import { buildSupervisor } from '../src/supervisor-link/build-supervisor.ts';
import type { RemoteProcess } from '../src/supervisor-link/remote-process.ts';
import { SupervisorClient } from '../src/supervisor-link/supervisor-client.ts';
import { makeTempRoot } from './temp-root.ts';

const asRoot = process.getuid?.() === 0;
const uid = 61_234;
const path = { PATH: '/usr/bin:/bin' };

async function stdoutOf(process: RemoteProcess): Promise<string> {
  let text = '';
  for await (const chunk of process.stdout) text += chunk.toString();
  await process.exited;
  return text;
}

/** A probe that tries PTRACE_ATTACH (x86_64 syscall 101, request 16) on a pid and says how it went. */
const ptraceProbe =
  'my $r = syscall(101, 16, $ARGV[0] + 0, 0, 0); print $r == 0 ? "attached\\n" : "refused: $!\\n"';

describe.skipIf(!asRoot || !existsSync('/usr/bin/bwrap') || process.arch !== 'x64')(
  'the supervisor in a bubblewrap sandbox, started as root',
  () => {
    let root: Awaited<ReturnType<typeof makeTempRoot>>;
    let launcher: BwrapLauncher;
    let client: SupervisorClient;
    let supervisorPid: number;
    let views: ReadOnlyViews;

    beforeAll(async () => {
      root = await makeTempRoot('supervisor-bwrap');
      const supervisorDir = join(root.path, 'supervisor');
      const main = await buildSupervisor(supervisorDir);
      const workspace = await root.dir('workspace');
      await chown(workspace, uid, uid);
      const etcDir = join(root.path, 'etc');
      await buildSandboxEtc(etcDir, uid);
      const node = realpathSync(process.execPath);
      // As the provider shows code: through views that name no host path.
      views = await ReadOnlyViews.open(join(root.path, 'views'), true);
      launcher = spawnBwrap({
        bwrapPath: '/usr/bin/bwrap',
        setprivPath: '/usr/bin/setpriv',
        privileged: true,
        seccomp: sandboxSeccompFilter(),
        supervisorDrops: true,
        command: [`/opt/paddock/supervisor/${basename(main)}`, '--own-pids'],
      });
      launcher.start(
        [
          ...bwrapArgs({
            env: path,
            workspaceDir: workspace,
            etcDir,
            code: [
              { host: await views.show(supervisorDir), inside: '/opt/paddock/supervisor' },
              { host: await views.show(dirname(node)), inside: '/opt/paddock/node' },
            ],
          }),
          ...(await sandboxUserArgs(join(root.path, 'users'), uid)),
        ],
        uid,
      );
      launcher.child.stderr!.pipe(process.stderr);
      client = new SupervisorClient({
        input: launcher.child.stdin!,
        output: launcher.child.stdout!,
        onProtocolError: (reason) => {
          throw new Error(reason);
        },
      });
      supervisorPid = await client.ready;
    });

    afterAll(async () => {
      if (launcher?.child.pid) process.kill(-launcher.child.pid, 'SIGKILL');
      await views?.release();
      await root?.remove();
    });

    it("starts processes as the sandbox's user, with no capability", async () => {
      const probe = await client.spawn({
        argv: ['sh', '-c', 'id -u; id -g; id -G; grep -E "^Cap(Prm|Eff|Amb)" /proc/self/status'],
        env: path,
        cwd: '/workspace',
      });
      expect((await stdoutOf(probe)).split('\n')).toEqual([
        String(uid),
        String(uid),
        String(uid),
        'CapPrm:\t0000000000000000',
        'CapEff:\t0000000000000000',
        'CapAmb:\t0000000000000000',
        '',
      ]);
    });

    it("writes files as the sandbox's user", async () => {
      await client.writeFile('/workspace', 'made/by-supervisor.txt', 'hello');
      const host = join(root.path, 'workspace', 'made', 'by-supervisor.txt');
      expect(await stat(host)).toMatchObject({ uid, gid: uid });
      expect(await stat(dirname(host))).toMatchObject({ uid, gid: uid });
    });

    it("cannot be traced, signalled or read by the user's processes, which can trace each other", async () => {
      const neighbour = await client.spawn({ argv: ['sleep', '300'], env: path, cwd: '/workspace' });
      const attack = await client.spawn({
        argv: [
          'sh',
          '-c',
          'kill -KILL "$1" 2>/dev/null && echo signalled || echo signal-refused; ' +
            'cat /proc/"$1"/environ >/dev/null 2>&1 && echo environ-read || echo environ-refused; ' +
            'perl -e "$2" "$1"; perl -e "$2" "$(pgrep -x sleep)"',
          'attack',
          String(supervisorPid),
          ptraceProbe,
        ],
        env: path,
        cwd: '/workspace',
      });
      const lines = (await stdoutOf(attack)).trim().split('\n');
      expect(lines).toEqual([
        'signal-refused',
        'environ-refused',
        'refused: Operation not permitted',
        'attached',
      ]);
      neighbour.signal('SIGKILL');
      await neighbour.exited;
      // The supervisor is still there, and still serves.
      expect(await client.stat('/workspace', '.')).toMatchObject({ type: 'directory' });
    });

    it('a Stop spares a service detached just before the turn began, and kills what the turn detached without its marker', async () => {
      const detach = async (seconds: number, env: Record<string, string>) =>
        Number(
          (
            await stdoutOf(
              await client.spawn({
                argv: [
                  'sh',
                  '-c',
                  `${env.PADDOCK_RUN_ID ? 'env -i ' : ''}sh -c 'setsid sleep ${seconds} >/dev/null 2>&1 & echo $!'`,
                ],
                env,
                cwd: '/workspace',
              }),
            )
          ).trim(),
        );
      const alive = async (pid: number) =>
        (
          await stdoutOf(
            await client.spawn({
              // A killed process stays a zombie until its reaper waits for it: not alive.
              argv: [
                'sh',
                '-c',
                `sed 's/.*) //' /proc/${pid}/stat 2>/dev/null | grep -qv '^Z' && echo yes || echo no`,
              ],
              env: path,
              cwd: '/workspace',
            }),
          )
        ).trim() === 'yes';
      // The service and the turn start within a clock tick of each other (10 ms) more often than not.
      for (let round = 0; round < 5; round++) {
        const marker = `turn-tick-${round}`;
        const service = await detach(400 + round, path);
        await client.request({ op: 'run.begin', marker, kind: 'turn' });
        const dropped = await detach(410 + round, { ...path, PADDOCK_RUN_ID: marker });
        await client.request({ op: 'run.kill', marker });
        await expect.poll(() => alive(dropped), { timeout: 5_000, interval: 20 }).toBe(false);
        expect(await alive(service)).toBe(true);
        await client.request({ op: 'run.end', marker });
      }
    });

    it("holds no node_modules of Paddock's: only the supervisor and Node", async () => {
      const mounts = await client.spawn({
        argv: ['sh', '-c', 'cat /proc/self/mountinfo; ls /opt/paddock'],
        env: path,
        cwd: '/workspace',
      });
      const text = await stdoutOf(mounts);
      expect(text).not.toContain('node_modules');
      expect(text.trim().split('\n').slice(-2)).toEqual(['node', 'supervisor']);
    });
  },
);
