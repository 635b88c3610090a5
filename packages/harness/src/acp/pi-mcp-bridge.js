// A pi extension (written into pi's home by the coding_eta profile): pi has no MCP client of its
// own and pi-acp drops ACP's `mcpServers`, so this connects to the agent's MCP servers, which the
// harness hands over in PADDOCK_MCP_SERVERS (ACP's McpServer list as JSON), and registers each
// server's tools as pi tools named `<server>_<tool>`. `{{install}}` is filled in when it is written.
const sdk = '{{install}}/node_modules/@modelcontextprotocol/sdk/dist/esm/client';

export default async function paddockMcp(pi) {
  const servers = JSON.parse(process.env.PADDOCK_MCP_SERVERS || '[]');
  // The list may hold the relay's token: the shell commands pi runs do not inherit it.
  delete process.env.PADDOCK_MCP_SERVERS;
  if (servers.length === 0) return;
  const { Client } = await import(`${sdk}/index.js`);
  const clients = [];
  for (const server of servers) {
    const client = new Client({ name: 'paddock-pi', version: '1' });
    try {
      await client.connect(await transportFor(server));
      const { tools } = await client.listTools();
      for (const tool of tools) pi.registerTool(piTool(client, server.name, tool));
      clients.push(client);
    } catch (error) {
      process.stderr.write(
        `paddock-mcp: ${server.name}: ${error instanceof Error ? error.message : error}\n`,
      );
    }
  }
  pi.on('session_shutdown', async () => {
    await Promise.allSettled(clients.map((client) => client.close()));
  });
}

/** A command server is started here, in the sandbox; a url server is the Paddock relay. */
async function transportFor(server) {
  const pairs = (list) => Object.fromEntries((list ?? []).map(({ name, value }) => [name, value]));
  if (server.command) {
    const { StdioClientTransport, getDefaultEnvironment } = await import(`${sdk}/stdio.js`);
    const env = { ...getDefaultEnvironment(), ...pairs(server.env) };
    return new StdioClientTransport({
      command: server.command,
      args: server.args ?? [],
      env,
      stderr: 'ignore',
    });
  }
  const { StreamableHTTPClientTransport } = await import(`${sdk}/streamableHttp.js`);
  return new StreamableHTTPClientTransport(new URL(server.url), {
    requestInit: { headers: pairs(server.headers) },
  });
}

function piTool(client, serverName, tool) {
  const name = `${serverName}_${tool.name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
  return {
    name,
    label: name,
    description: tool.description ?? `${tool.name} (MCP server ${serverName})`,
    parameters: tool.inputSchema ?? { type: 'object', properties: {} },
    async execute(_toolCallId, params, signal) {
      const result = await client.callTool({ name: tool.name, arguments: params }, undefined, { signal });
      const content = (result.content ?? []).map((part) =>
        part.type === 'text' || part.type === 'image' ? part : { type: 'text', text: JSON.stringify(part) },
      );
      if (result.isError) throw new Error(content.map((part) => part.text ?? '').join('\n'));
      return { content, details: {} };
    },
  };
}
