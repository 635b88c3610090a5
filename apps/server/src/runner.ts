// `paddock runner`'s own entry point: a process that hosts sandboxes and runs their turns for the
// server it connects to (commands/runner.ts). It loads the runner's modules only, never the server's.
import { enableCompileCache } from 'node:module';

enableCompileCache();
const { runCommand } = await import('./startup/run-command.ts');
const { runRunner } = await import('./commands/runner.ts');
await runCommand(runRunner);
