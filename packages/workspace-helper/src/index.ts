// What the host side shares with the workspace helper: where its program is, the frames both ends
// speak, and the shapes of its requests and answers. Nothing here runs in the helper but `main.ts`.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The helper's folder: it runs `main.ts` from here, the folder given to it as a descriptor. */
export const workspaceHelperDir = dirname(fileURLToPath(import.meta.url));

export { encodeFrame, type Frame, FrameParser } from './frames.ts';
export type {
  EntryStats,
  RefusalCode,
  Refused,
  TreeWalkNode,
  WorkspaceAnswer,
  WorkspaceRequest,
} from './requests.ts';
