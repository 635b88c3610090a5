// The runner's root-side commands (mount, umount, mkfs.ext4), run by a small process of
// their own: a spawn blocks the process that makes it for its fork and exec (10 to 15 ms each on a
// small machine), and a sandbox's boot and handover take a dozen of them. Here they block this
// process, not the runner's event loop. Node builtins and `runToExit` only; it reads one request a
// line on stdin and answers each on stdout once its command has ended, and ends when stdin does and
// its commands have.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { runToExit } from '../run-to-exit.ts';

/** What the runner may ask for, and nothing else. */
const allowed = new Set(['mount', 'umount', 'mkfs.ext4']);
/** They live in /sbin and /usr/sbin, which a service's PATH may lack. */
const env = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin' };

interface Request {
  id: number;
  command: string;
  args: string[];
  timeoutMs: number;
}

const answer = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

function run({ id, command, args, timeoutMs }: Request): void {
  if (!allowed.has(command) || !Array.isArray(args) || !args.every((arg) => typeof arg === 'string')) {
    answer({ id, error: `not a command of the runner's: ${String(command)}` });
    return;
  }
  // A group of its own: a signal to the runner's group (a terminal's Ctrl-C, a service manager's
  // stop) must not cut a mount or an unmount short while the runner cleans up.
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'], env, detached: true });
  runToExit(child, timeoutMs, command).then(
    ({ code, stderr }) => answer({ id, code, stderr }),
    (error: Error) => answer({ id, error: error.message }),
  );
}

for await (const line of createInterface({ input: process.stdin })) run(JSON.parse(line) as Request);
