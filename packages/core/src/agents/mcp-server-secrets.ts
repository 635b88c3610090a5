import type { AgentSpec, McpServerView } from '@paddock/protocol';
import type { SecretBox } from '../crypto/secret-box.ts';

type McpServer = NonNullable<AgentSpec['mcp_servers']>[number];
type SecretFields = 'headers' | 'env';
const secretFields: readonly SecretFields[] = ['headers', 'env'];

/** A value as `agents.mcp_servers` holds it: sealed (migration 0013 sealed the plain ones). */
type StoredValue = { sealed: string } | string;
type StoredMcpServer = Omit<McpServer, SecretFields> &
  Partial<Record<SecretFields, Record<string, StoredValue>>>;

/**
 * MCP server `headers` and `env` values are secrets, like an agent's secrets (D4): sealed at rest,
 * opened only where the runtime uses them (the probe, a patch applied to the spec), and answered by
 * name only. The rest of a server's config stays readable JSON.
 */
export function sealMcpServers(secrets: SecretBox, servers: McpServer[]): string {
  return JSON.stringify(
    servers.map((server) => mapSecrets(server, (value) => ({ sealed: secrets.seal(value) }))),
  );
}

/** The servers with their values, for the runtime. */
export function openMcpServers(secrets: SecretBox, stored: string): McpServer[] {
  return (JSON.parse(stored) as StoredMcpServer[]).map((server) =>
    mapSecrets(server, (value) => (typeof value === 'string' ? value : secrets.open(value.sealed))),
  ) as McpServer[];
}

/** The servers as answers show them: `header_names` and `env_names` instead of the values. */
export function mcpServerViews(stored: string): McpServerView[] {
  return (JSON.parse(stored) as StoredMcpServer[]).map(({ headers, env, ...rest }) => ({
    ...rest,
    ...(headers && { header_names: Object.keys(headers).sort() }),
    ...(env && { env_names: Object.keys(env).sort() }),
  }));
}

function mapSecrets<From, To>(
  server: Omit<McpServer, SecretFields> & Partial<Record<SecretFields, Record<string, From>>>,
  map: (value: From) => To,
): Omit<McpServer, SecretFields> & Partial<Record<SecretFields, Record<string, To>>> {
  const mapped: Omit<McpServer, SecretFields> & Partial<Record<SecretFields, Record<string, To>>> = {
    ...server,
  } as never;
  for (const field of secretFields) {
    const values = server[field];
    if (values)
      mapped[field] = Object.fromEntries(Object.entries(values).map(([name, value]) => [name, map(value)]));
  }
  return mapped;
}
