import { describe, expect, it } from 'vitest';
import { mcpToolName } from '../src/mcp/mcp-tool-name.ts';
import { mcpToolSet } from '../src/mcp/mcp-tool-set.ts';
import type { McpToolbox } from '../src/mcp/mcp-toolbox.ts';

// The tools' execute as the AI SDK calls it, with the options it passes.
function call(t: { execute?: (input: unknown, options: never) => unknown } | undefined, input: unknown) {
  return Promise.resolve(t!.execute!(input, { toolCallId: 'test', messages: [], context: {} } as never));
}

/** A toolbox of two servers whose tools answer what they were called with (the seam the supervisor fills). */
const toolbox: McpToolbox = {
  tools: () => [
    { server: 'files', name: 'read_file', description: 'Reads a file', inputSchema: { type: 'object' } },
    { server: 'my server', name: 'look.up', inputSchema: { properties: { q: { type: 'string' } } } },
    { server: 'my_server', name: 'look_up', inputSchema: { type: 'object' } },
  ],
  call: async (server, tool, args) =>
    tool === 'read_file'
      ? { text: `${server}/${tool} ${JSON.stringify(args)}`, isError: false }
      : { text: 'no such word', isError: true },
};

describe('MCP tools offered to the model', () => {
  it('names each tool mcp__<server>__<tool> with what a tool name allows, at most 64 characters', () => {
    expect(mcpToolName('everything', 'echo')).toBe('mcp__everything__echo');
    expect(mcpToolName('my server', 'look.up')).toBe('mcp__my_server__look_up');
    expect(mcpToolName('s', 'x'.repeat(100))).toHaveLength(64);
  });

  it('offers every tool once, calls the server, and fails a call the server marks as an error', async () => {
    const tools = mcpToolSet(toolbox, new AbortController().signal);
    // Two tools whose cleaned names collide: the first keeps the name.
    expect(Object.keys(tools)).toEqual(['mcp__files__read_file', 'mcp__my_server__look_up']);
    expect(tools.mcp__files__read_file!.description).toBe('Reads a file');
    expect(await call(tools.mcp__files__read_file, { path: 'a.txt' })).toBe(
      'files/read_file {"path":"a.txt"}',
    );
    await expect(call(tools.mcp__my_server__look_up, { q: 'x' })).rejects.toThrow('no such word');
  });
});
