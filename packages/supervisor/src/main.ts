// The program in every sandbox of Paddock's: the sandbox's hands. It starts processes and relays their
// stdio, signals them, reads and writes files, and serves the sandbox's loopback doors; the runner,
// outside, runs every loop and every protocol's client. Node builtins only, and as few of them as
// will do: a sandbox's idle cost is this process.
import type { SupervisorRequest } from '@paddock/protocol';
import { dialOut, readDialToken, type SupervisorLink } from './dial-out.ts';
import { openDoors } from './doors/open-doors.ts';
import { parseFlags } from './flags.ts';
import { FrameWriter } from './frame-writer.ts';
import { Processes } from './processes.ts';
import { readLines } from './read-lines.ts';
import { RunProcesses } from './run-processes.ts';
import { becomeSandboxUser } from './sandbox-user.ts';
import { serveRequest } from './serve-requests.ts';

const flags = parseFlags(process.argv.slice(2));
// Its frames travel on stdin and stdout (a pipe; in a micro-VM, the init puts the control port
// there), or on a WebSocket it dials out to Paddock, whose token it reads while it is still root.
const linked: Promise<SupervisorLink> = flags.connect
  ? Promise.resolve().then(() => dialOut(flags.connect!, readDialToken(flags.tokenFile!)))
  : Promise.resolve({ input: process.stdin, output: process.stdout });
linked.then(
  (link) => {
    const frames = new FrameWriter(link.output);
    // Opened as root too (a micro-VM's ports), and before the first request: the first process
    // started finds them.
    void openDoors(flags)
      .catch((error: unknown) => {
        const message = `the sandbox's doors did not open: ${String(error)}`;
        frames.send({ ev: 'log', level: 'error', message });
      })
      .then(() => serve(link, frames));
  },
  (error: Error) => {
    process.stderr.write(`supervisor: ${error.message}\n`);
    process.exit(1);
  },
);

/** Takes the sandbox's user and serves the runner's requests until its link ends. */
function serve(link: SupervisorLink, frames: FrameWriter): void {
  const user = becomeSandboxUser(flags.uid);
  const runs = new RunProcesses({ ownPids: flags.ownPids });
  const processes = new Processes(frames, user, runs);
  const stop = (): never => {
    processes.killAll();
    process.exit(0);
  };
  const parts = { frames, processes, runs, shutdown: stop };
  // A write to a runner that is gone fails with EPIPE; there is no one left to serve.
  link.output.on('error', () => stop());
  link.input.on('end', () => stop());
  process.on('uncaughtException', (error) => {
    frames.send({ ev: 'log', level: 'error', message: `supervisor: ${error.stack ?? error.message}` });
  });
  readLines(link.input, (line) => {
    let request: SupervisorRequest;
    try {
      request = JSON.parse(line) as SupervisorRequest;
    } catch {
      frames.send({ ev: 'log', level: 'warn', message: `unparsable request: ${line.slice(0, 200)}` });
      return;
    }
    serveRequest(request, parts);
  });
  frames.send({ ev: 'ready', pid: process.pid });
}
