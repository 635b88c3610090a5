import type { SupervisorRequest } from '@paddock/protocol';
import { aimDoor, closeDoor, openDoor } from './doors/gateway-doors.ts';
import { listDirectory, makeSymlink, readFile, removeFile, statFile, writeFile } from './files.ts';
import type { FrameWriter } from './frame-writer.ts';
import type { Processes } from './processes.ts';
import type { Run, RunProcesses } from './run-processes.ts';

export interface SupervisorParts {
  frames: FrameWriter;
  processes: Processes;
  runs: RunProcesses;
  /** The sandbox stops. */
  shutdown(): void;
}

/** Carries out one request of the runner's and answers it (`re`) with its result or why it failed. */
export function serveRequest(request: SupervisorRequest, parts: SupervisorParts): void {
  if (!('id' in request)) {
    serveUnanswered(request, parts);
    return;
  }
  const { id } = request;
  void (async () => answerOf(request, parts))().then(
    (ok) => parts.frames.send({ re: id, ok }),
    (error: unknown) => parts.frames.send({ re: id, error: describe(error) }),
  );
}

const runs = new Map<string, Run>();

async function answerOf(
  request: Extract<SupervisorRequest, { id: number }>,
  parts: SupervisorParts,
): Promise<Record<string, unknown>> {
  switch (request.op) {
    case 'spawn':
      return { pid: await parts.processes.start(request) };
    case 'proc.alive':
      return { alive: parts.processes.alive(request.proc) };
    case 'run.begin':
      runs.set(request.marker, parts.runs.begin(request.kind, request.marker));
      return {};
    case 'run.end': {
      const run = runs.get(request.marker);
      if (run) parts.runs.end(run);
      // A code run's record stays: what it put in the background still counts as its own for a while.
      if (run?.kind === 'turn') runs.delete(request.marker);
      return {};
    }
    case 'run.kill': {
      const run = runs.get(request.marker);
      return { killed: run ? parts.runs.killTurn(run) : 0 };
    }
    case 'file.read':
      return readFile(request);
    case 'file.write':
      return writeFile(request);
    case 'file.list':
      return listDirectory(request);
    case 'file.stat':
      return statFile(request);
    case 'file.remove':
      return removeFile(request);
    case 'file.symlink':
      return makeSymlink(request);
    case 'door.open':
      return { port: await openDoor() };
    case 'door.aim':
      aimDoor(request.port, request.api_url, request.token);
      return {};
    case 'door.close':
      closeDoor(request.port);
      return {};
  }
}

function serveUnanswered(request: Exclude<SupervisorRequest, { id: number }>, parts: SupervisorParts): void {
  switch (request.op) {
    case 'stdin':
      parts.processes.write(request.proc, request.data, request.end);
      return;
    case 'signal':
      parts.processes.signal(request.proc, request.signal);
      return;
    case 'shutdown':
      parts.shutdown();
  }
}

function describe(error: unknown): { code: string; message: string } {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return { code: typeof code === 'string' ? code : 'failed', message: message.slice(0, 10_000) };
}
