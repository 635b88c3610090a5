// Where the host commands' program is, for the host side that builds and starts it (sandbox's
// host-commands.ts). The program itself is Go, in this folder.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the program's Go sources (`go.mod` and its `*.go` files). */
export const hostCommandsSourceDir = dirname(fileURLToPath(import.meta.url));
/** The program's file name, in the build cache. */
export const hostCommandsBinary = 'paddock-host-commands';
