import { z } from 'zod';

/** MCP authorization state (spec: "MCP authorization state"). */
export const mcpAuthorizationStates = ['none', 'oauth_required', 'oauth_connected', 'oauth_expired'] as const;
export type McpAuthorizationState = (typeof mcpAuthorizationStates)[number];

/** `http` is MCP's streamable HTTP, `sse` the older HTTP+SSE one, `stdio` a command in the sandbox. */
export const mcpTransports = ['http', 'sse', 'stdio'] as const;
export type McpTransport = (typeof mcpTransports)[number];

/**
 * One entry of `GET /agents/{id}/mcp-servers`. Never a token: only whether one exists and when it
 * lapses. `last_check.source` says who checked: the control plane's own probe of a remote server,
 * or the agent's sandbox (an `mcp.status` event) for a command it runs.
 */
export const mcpServerReportSchema = z.object({
  name: z.string(),
  transport: z.enum(mcpTransports),
  url: z.string().nullable(),
  command: z.string().nullable(),
  enabled: z.boolean(),
  authorization: z.enum(mcpAuthorizationStates),
  token: z.object({ present: z.boolean(), expires_at: z.string().nullable() }),
  last_check: z.object({
    status: z.enum(['ok', 'error', 'unknown']),
    error: z.string().nullable(),
    tool_count: z.number().int().nullable(),
    checked_at: z.string().nullable(),
    source: z.enum(['control_plane', 'sandbox']).nullable(),
  }),
});
export type McpServerReport = z.infer<typeof mcpServerReportSchema>;
