import { readFrame, writeFrame } from './frames.ts';
import { checkTarget, land } from './land.ts';
import { content, list, tree } from './reads.ts';
import { Refusal } from './refusal.ts';
import type { WorkspaceAnswer, WorkspaceRequest } from './requests.ts';

/**
 * The workspace helper, run as the workspace's owner (never root) on the workspace the server
 * opened for it (descriptor 3). It serves requests one at a time, framed on stdin and stdout
 * (`frames.ts`), until the server closes stdin. The helper never sees a host path.
 */
const input = 0;
const output = 1;

const send = (answer: WorkspaceAnswer) => writeFrame(output, 'J', Buffer.from(JSON.stringify(answer)));

function failure(error: unknown): WorkspaceAnswer {
  if (error instanceof Refusal) return { refused: error.code, message: error.message };
  const failed = error as NodeJS.ErrnoException;
  return { failed: failed.code ?? 'error', message: failed.message ?? String(error) };
}

/** Pieces of an upload, until its end; the server giving up throws. */
function uploadPieces(): { next: () => Buffer | null; drain: () => void } {
  let ended = false;
  const next = () => {
    if (ended) return null;
    const frame = readFrame(input);
    if (frame?.type === 'D') return frame.payload;
    ended = true;
    if (frame?.type === 'E') return null;
    throw new Error('the upload was abandoned');
  };
  return {
    next,
    drain: () => {
      try {
        while (next() !== null);
      } catch {}
    },
  };
}

function serve(request: WorkspaceRequest): void {
  switch (request.op) {
    case 'list':
      send(list(request.path));
      return;
    case 'tree':
      send(tree(request.path, request.maxDepth, request.maxEntries));
      return;
    case 'check-target':
      send(checkTarget(request.path));
      return;
    case 'land': {
      const pieces = uploadPieces();
      try {
        send(land(request.path, request.size, request.tempTag, pieces.next));
      } finally {
        // Refused before the bytes were read: they are still on their way, and must not be taken for requests.
        pieces.drain();
      }
      return;
    }
    case 'content': {
      let started = false;
      try {
        content(
          request.path,
          (header) => {
            started = true;
            send(header);
          },
          (bytes) => writeFrame(output, 'D', bytes),
        );
      } catch (error) {
        if (!started) throw error;
        writeFrame(output, 'E');
        send(failure(error));
        return;
      }
      writeFrame(output, 'E');
      send({ done: true });
      return;
    }
    default:
      throw new Error('unknown request');
  }
}

process.umask(0o022);
for (let frame = readFrame(input); frame; frame = readFrame(input)) {
  if (frame.type !== 'J') continue;
  try {
    serve(JSON.parse(frame.payload.toString('utf8')) as WorkspaceRequest);
  } catch (error) {
    send(failure(error));
  }
}
