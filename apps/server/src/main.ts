// The `paddock` program: the server, a runner, or one of its commands (program.ts; the runner has an
// entry point of its own, runner.ts). Start-up loads several hundred modules, each stripped of its
// types and compiled; Node's compile cache keeps that work between starts (a fifth of start-up here),
// so it is switched on before any of them loads.
import { enableCompileCache } from 'node:module';

enableCompileCache();
await (process.argv[2] === 'runner' ? import('./runner.ts') : import('./program.ts'));
