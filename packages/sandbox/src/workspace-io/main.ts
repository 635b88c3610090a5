import { closeSync, writeSync } from 'node:fs';
import { checkTarget, land } from './land.ts';
import { content, list, tree } from './reads.ts';
import { Refusal } from './refusal.ts';
import type { WorkspaceAnswer, WorkspaceRequest } from './requests.ts';

/**
 * The workspace helper: one request (argv[2], JSON) on the workspace the server opened for it
 * (descriptor 3), run as the workspace's owner, never root. The answer goes to descriptor 4; the
 * bytes of an upload come on stdin, those of a download go to stdout.
 */
const answerFd = 4;
let answered = false;
function answer(reply: WorkspaceAnswer): void {
  if (answered) return;
  answered = true;
  writeSync(answerFd, JSON.stringify(reply));
  closeSync(answerFd);
}

process.umask(0o022);
try {
  const request = JSON.parse(process.argv[2] ?? '') as WorkspaceRequest;
  switch (request.op) {
    case 'list':
      answer(list(request.path));
      break;
    case 'tree':
      answer(tree(request.path, request.maxDepth, request.maxEntries));
      break;
    case 'content':
      content(request.path, answer, 1);
      break;
    case 'check-target':
      answer(checkTarget(request.path));
      break;
    case 'land':
      answer(land(request.path, request.size, request.tempTag, 0));
      break;
    default:
      throw new Error('unknown request');
  }
} catch (error) {
  if (answered) {
    // Mid-download: the server sees the exit status and cuts the response short.
    process.stderr.write(`${(error as Error).message}\n`);
    process.exitCode = 1;
  } else if (error instanceof Refusal) {
    answer({ refused: error.code, message: error.message });
  } else {
    const failure = error as NodeJS.ErrnoException;
    answer({ failed: failure.code ?? 'error', message: failure.message ?? String(error) });
  }
}
