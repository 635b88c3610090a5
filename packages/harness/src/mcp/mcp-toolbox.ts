/**
 * The MCP servers a sandbox keeps running, as a harness sees them: the tools of every server that is
 * connected now, and a way to call one. The supervisor holds them across turns (`command` servers run
 * in the sandbox, `url` servers are reached through the Paddock server's relay); a harness only offers
 * their tools to its model.
 */
export interface McpToolbox {
  tools(): McpTool[];
  /** Calls a server's tool; a server that died since it was listed is started again first. */
  call(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<McpToolResult>;
}

export interface McpTool {
  server: string;
  name: string;
  description?: string;
  /** The tool's input schema as the server published it (a JSON Schema object). */
  inputSchema: Record<string, unknown>;
}

export interface McpToolResult {
  /** The text of the result's content (text parts joined; other parts described). */
  text: string;
  /** The server said the call failed (`isError`). */
  isError: boolean;
}
