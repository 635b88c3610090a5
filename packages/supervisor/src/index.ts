// What the host side shares with the supervisor: where its program is, and the codecs both ends of
// its links speak. Nothing here runs in a sandbox but through `main.ts`.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the supervisor's sources; a provider builds them into the JavaScript a sandbox runs. */
export const supervisorSourceDir = dirname(fileURLToPath(import.meta.url));
/** The supervisor's entry file, by its name in that folder. */
export const supervisorEntry = 'main.ts';

export {
  type EgressUpstream,
  egressPort,
  loopbackConnectTarget,
  socketUpstream,
  startEgressPort,
} from './doors/egress-port.ts';
export { loopbackApiPort } from './doors/loopback-proxy.ts';
export { pipeSockets } from './doors/pipe-sockets.ts';
export { bindStream, encodeFrame, type FrameType, frameDecoder, frameType } from './doors/port-frames.ts';
export { type ReadLinesBound, readLines } from './read-lines.ts';
export { runIdVariable } from './run-processes.ts';
