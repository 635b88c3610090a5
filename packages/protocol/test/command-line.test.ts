import { describe, expect, it } from 'vitest';
import { mcpServerSchema } from '../src/agents.ts';
import { CommandLineError, commandLineWords } from '../src/command-line.ts';

describe('commandLineWords', () => {
  it('splits at blanks, as a shell does', () => {
    expect(commandLineWords('npx -y @modelcontextprotocol/server-everything')).toEqual([
      'npx',
      '-y',
      '@modelcontextprotocol/server-everything',
    ]);
    expect(commandLineWords('  python3\t-m  server \n')).toEqual(['python3', '-m', 'server']);
  });

  it('keeps quoted text whole and expands nothing', () => {
    expect(commandLineWords(`node 'my server.js' --name "a \\"b\\" $HOME" ~ *.txt`)).toEqual([
      'node',
      'my server.js',
      '--name',
      'a "b" $HOME',
      '~',
      '*.txt',
    ]);
    expect(commandLineWords(`printf '' "" a\\ b`)).toEqual(['printf', '', '', 'a b']);
    expect(commandLineWords(`say "back\\slash" it\\'s`)).toEqual(['say', 'back\\slash', "it's"]);
  });

  it('refuses a quote left open, or a trailing backslash', () => {
    expect(() => commandLineWords(`node "server.js`)).toThrow(CommandLineError);
    expect(() => commandLineWords(`node 'server.js`)).toThrow('quote open');
    expect(() => commandLineWords('node \\')).toThrow('backslash');
  });
});

describe("an MCP server's command", () => {
  it('takes a command line, or any program with args for an exact argv', () => {
    expect(mcpServerSchema.safeParse({ name: 'e', command: 'npx -y server' }).success).toBe(true);
    expect(mcpServerSchema.safeParse({ name: 'e', command: '/opt/my "odd', args: [] }).success).toBe(true);
  });

  it('refuses a command line that does not split, saying why', () => {
    const parsed = mcpServerSchema.safeParse({ name: 'e', command: 'npx "server' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues).toMatchObject([
      { path: ['command'], message: expect.stringContaining('quotes') },
    ]);
    expect(mcpServerSchema.safeParse({ name: 'e', command: '   ' }).success).toBe(false);
  });
});
