import { commandLineWords, type TurnMcpServer } from '@paddock/protocol';
import { openMcpServers } from '../agents/mcp-server-secrets.ts';
import type { SecretBox } from '../crypto/secret-box.ts';

/**
 * The agent's enabled MCP servers as a turn carries them into its sandbox: a `command` server with
 * its `env` values opened (the sandbox runs it, like the agent's secrets reach its tools); a `url`
 * server by name only, since the sandbox reaches it through the relay, which adds its `headers` on
 * the server side.
 */
export function turnMcpServers(secrets: SecretBox, stored: string): TurnMcpServer[] {
  return openMcpServers(secrets, stored)
    .filter((server) => server.enabled !== false)
    .map((server) =>
      server.command !== undefined
        ? {
            name: server.name,
            transport: 'stdio',
            ...programOf(server.command, server.args),
            env: server.env ?? {},
          }
        : { name: server.name, transport: 'http' },
    );
}

/**
 * The program and arguments a `command` server runs: `args`, when given, with `command` as the
 * program exactly; else `command` is a command line, split as a shell would split it (the spec
 * gives a server only `command`, so `npx -y <server>` must work).
 */
function programOf(command: string, args: string[] | undefined): { command: string; args: string[] } {
  if (args !== undefined) return { command, args };
  const [program = command, ...rest] = commandLineWords(command);
  return { command: program, args: rest };
}
