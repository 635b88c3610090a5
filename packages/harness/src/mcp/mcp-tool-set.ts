import { type JSONSchema7, jsonSchema, type ToolSet, tool } from 'ai';
import { mcpToolName } from './mcp-tool-name.ts';
import type { McpToolbox } from './mcp-toolbox.ts';

/**
 * Every connected MCP server's tools as the model's tools, named `mcp__<server>__<tool>` with the
 * server's own input schema. A call answers the result's text; a result the server marked as an
 * error fails the call (the model sees its text as the error). Two tools whose names collide once
 * cleaned: the first keeps the name.
 */
export function mcpToolSet(toolbox: McpToolbox, signal: AbortSignal): ToolSet {
  const tools: ToolSet = {};
  for (const listed of toolbox.tools()) {
    const name = mcpToolName(listed.server, listed.name);
    if (name in tools) continue;
    tools[name] = tool({
      description: listed.description ?? `${listed.name} (MCP server ${listed.server})`,
      inputSchema: jsonSchema<Record<string, unknown>>(objectSchema(listed.inputSchema)),
      execute: async (args) => {
        const result = await toolbox.call(listed.server, listed.name, args ?? {}, signal);
        if (result.isError) throw new Error(result.text || 'the MCP tool failed');
        return result.text;
      },
    });
  }
  return tools;
}

/** Model APIs want an object schema for a tool's input; a server's may lack `type` or `properties`. */
function objectSchema(schema: Record<string, unknown>): JSONSchema7 {
  const { $schema: _ignored, ...rest } = schema;
  return { ...rest, type: 'object', properties: (rest.properties as JSONSchema7['properties']) ?? {} };
}
