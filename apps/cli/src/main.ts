/**
 * `paddock`: the command-line client of a Paddock service (D15). The only place in the program that
 * reads `process.env` and `process.argv`; every call to the service goes through `@paddock/sdk`.
 */
import { createClient, type PaddockClient } from '@paddock/sdk';
import { Command, CommanderError } from 'commander';
import { accessCommands } from './agent-access.ts';
import { agentCommands } from './agents.ts';
import { type ConnectionFlags, type Endpoints, type Env, resolveEndpoints, resolveToken } from './config.ts';
import { fileCommands } from './files.ts';
import { linkCommands } from './link.ts';
import { orchestrationCommands } from './orchestrations.ts';
import { exitCodes, Output } from './output.ts';
import { registryCommands } from './registry.ts';
import { scheduleCommands } from './schedules.ts';
import { sessionCommands } from './session.ts';
import { teamCommands } from './teams.ts';
import { threadListCommand } from './thread-list.ts';
import { threadCommands } from './threads.ts';

/** What a command's action works with. */
export interface Context {
  out: Output;
  env: Env;
  /** Aborts on Ctrl-C (SIGINT) or SIGTERM: streams end, uploads stop where they are. */
  signal: AbortSignal;
  endpoints(): Endpoints;
  /** The SDK client for the service and token of the flags and environment. */
  client(): PaddockClient;
  /** The code the program ends with. */
  exit(code: number): void;
}

interface GlobalOptions extends ConnectionFlags {
  json?: boolean;
}

export function buildProgram(env: Env, signal: AbortSignal, exit: (code: number) => void): Command {
  const program = new Command('paddock')
    .description('Run AI agents in sandboxes on a Paddock service, follow them live, and move files.')
    .version('0.1.0')
    .option('--json', 'machine output on stdout: one JSON document, or one event a line for run/watch')
    .option(
      '--url <url>',
      'the service (default: $PADDOCK_URL, else the host of $SERVICE_API_URL, else http://127.0.0.1:8787)',
    )
    .option('--api-url <url>', 'the legacy control plane host, {url}/api/cli (default: $SERVICE_API_URL)')
    .option(
      '--control-plane-url <url>',
      'another control-plane host, {url}/v2/cli (default: $SERVICE_CONTROL_PLANE_URL)',
    )
    .option('--token <token>', 'the personal access token (default: $SERVICE_TOKEN)')
    .showHelpAfterError('(paddock --help, or paddock <command> --help, for usage)')
    .exitOverride();
  let context: Context | undefined;
  const get = (): Context => {
    if (context) return context;
    const flags = program.opts<GlobalOptions>();
    let client: PaddockClient | undefined;
    let endpoints: Endpoints | undefined;
    const out = new Output({ stdout: process.stdout, stderr: process.stderr, env }, Boolean(flags.json));
    context = {
      out,
      env,
      signal,
      endpoints: () => (endpoints ??= resolveEndpoints(flags, env)),
      client: () => {
        if (client) return client;
        const { baseUrl } = context!.endpoints();
        client = createClient({ baseUrl, token: resolveToken(flags, env) });
        return client;
      },
      exit,
    };
    return context;
  };
  threadCommands(program, get);
  threadListCommand(program, get);
  fileCommands(program, get);
  scheduleCommands(program, get);
  sessionCommands(program, get);
  teamCommands(program, get);
  agentCommands(program, get);
  accessCommands(program, get);
  orchestrationCommands(program, get);
  registryCommands(program, get);
  linkCommands(program, get);
  program
    .command('config')
    .description('where the program talks to (resolved from the flags and the environment)')
    .action(() => {
      const ctx = get();
      const endpoints = ctx.endpoints();
      const token = program.opts<GlobalOptions>().token
        ? '--token'
        : env.SERVICE_TOKEN
          ? 'SERVICE_TOKEN'
          : null;
      const doc = {
        service_url: endpoints.baseUrl,
        control_plane_url: endpoints.controlPlaneUrl,
        legacy: endpoints.legacy,
        token_from: token,
      };
      ctx.out.result(doc, () => {
        for (const [key, value] of Object.entries(doc)) ctx.out.line(`${key}: ${value ?? '-'}`);
      });
      exit(exitCodes.ok);
    });
  return program;
}

async function main(): Promise<number> {
  // A reader that went away (`paddock watch … | head`) ends the program quietly.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(exitCodes.ok);
    throw error;
  });
  const controller = new AbortController();
  let signals = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    if (++signals > 1) process.exit(130);
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  let code: number = exitCodes.ok;
  const program = buildProgram(process.env, controller.signal, (c) => (code = c));
  try {
    await program.parseAsync(process.argv);
    return code;
  } catch (error) {
    if (error instanceof CommanderError)
      return error.exitCode === 0 || error.code === 'commander.help' ? exitCodes.ok : exitCodes.usage;
    const json = Boolean(program.opts<GlobalOptions>().json);
    return new Output({ stdout: process.stdout, stderr: process.stderr, env: process.env }, json).fail(error);
  }
}

// Ends the process once the command is done and stdout is flushed (an open keepalive or a tus
// timer would hold it).
const code = await main();
await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
process.exit(code);
