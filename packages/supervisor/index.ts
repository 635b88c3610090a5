// Where the supervisor's sources are, for the host side that builds them (sandbox's
// build-supervisor.ts). The program itself is Go, in this folder: nothing here runs in a sandbox.
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder of the supervisor's Go sources (`go.mod` and its `*.go` files). */
export const supervisorSourceDir = dirname(fileURLToPath(import.meta.url));
/** The program's file name, in a build's folder and in a sandbox. */
export const supervisorBinary = 'paddock-supervisor';
