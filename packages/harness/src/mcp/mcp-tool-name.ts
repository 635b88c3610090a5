/** Characters model APIs allow in a tool's name (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
const disallowed = /[^A-Za-z0-9_-]/g;
const maxLength = 64;

/** `mcp__<server>__<tool>`, each part with what a tool name cannot hold replaced by `_`, at most 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server.replace(disallowed, '_')}__${tool.replace(disallowed, '_')}`.slice(0, maxLength);
}
