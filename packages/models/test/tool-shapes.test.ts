import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type OfferedTool, shellCall, writeCall } from '../src/scripted/tool-shapes.ts';

const object = (properties: Record<string, unknown>, required: string[] = []) => ({
  type: 'object' as const,
  properties: properties as never,
  required,
});
const str = { type: 'string' as const };

// The shell and write tools as the coding agents declare them (their names and schemas' shapes).
const claude: OfferedTool[] = [
  {
    name: 'Bash',
    inputSchema: object({ command: str, description: str, timeout: { type: 'number' } }, ['command']),
  },
  {
    name: 'Write',
    inputSchema: object(
      {
        file_path: {
          ...str,
          description: 'The absolute path to the file to write (must be absolute, not relative)',
        },
        content: str,
      },
      ['file_path', 'content'],
    ),
  },
];
const codex: OfferedTool[] = [
  {
    name: 'shell',
    inputSchema: object({ command: { type: 'array', items: str }, workdir: str }, ['command']),
  },
  { name: 'apply_patch', inputSchema: object({ input: str }, ['input']) },
];
const codexExec: OfferedTool[] = [
  { name: 'exec_command', inputSchema: object({ cmd: str, workdir: str }, ['cmd']) },
];
const gemini: OfferedTool[] = [
  {
    name: 'run_shell_command',
    inputSchema: object(
      { command: str, description: str, dir_path: str, is_background: { type: 'boolean' } },
      ['command'],
    ),
  },
  // Gemini CLI 0.61's write_file resolves a relative path in its workspace.
  {
    name: 'write_file',
    inputSchema: object(
      { file_path: { ...str, description: 'The path to the file to write to.' }, content: str },
      ['file_path', 'content'],
    ),
  },
];
const opencode: OfferedTool[] = [
  {
    name: 'bash',
    inputSchema: object({ command: str, description: str, timeout: { type: 'number' } }, [
      'command',
      'description',
    ]),
  },
  { name: 'write', inputSchema: object({ filePath: str, content: str }, ['filePath', 'content']) },
];

describe('::sh shaped to the offered shell tool', () => {
  it.each([
    ['Claude Code', claude, { toolName: 'Bash', input: { command: 'ls -la' } }],
    ['Codex (shell)', codex, { toolName: 'shell', input: { command: ['bash', '-lc', 'ls -la'] } }],
    ['Codex (exec_command)', codexExec, { toolName: 'exec_command', input: { cmd: 'ls -la' } }],
    ['Gemini CLI', gemini, { toolName: 'run_shell_command', input: { command: 'ls -la' } }],
    [
      'OpenCode',
      opencode,
      { toolName: 'bash', input: { command: 'ls -la', description: 'run by the scripted model' } },
    ],
  ])('%s', (_, offered, expected) => {
    expect(shellCall('ls -la', offered)).toEqual(expected);
  });

  it('answers in words when no shell tool was offered', () => {
    expect(shellCall('ls', [{ name: 'read' }])).toBe('::sh: no shell tool was offered (offered: read)');
  });
});

describe('::write shaped to the offered write tool', () => {
  it('uses the write tool with its own field names', () => {
    expect(writeCall('a.txt', 'x\n', opencode)).toEqual({
      toolName: 'write',
      input: { filePath: 'a.txt', content: 'x\n' },
    });
    expect(writeCall('/workspace/a.txt', 'x\n', claude)).toEqual({
      toolName: 'Write',
      input: { file_path: '/workspace/a.txt', content: 'x\n' },
    });
  });

  it("gives Gemini CLI's write_file a relative path, since its description does not ask for an absolute one", () => {
    expect(writeCall('notes.txt', 'x\n', gemini)).toEqual({
      toolName: 'write_file',
      input: { file_path: 'notes.txt', content: 'x\n' },
    });
  });

  it('writes a relative path through the shell where the write tool wants an absolute one, or there is none', () => {
    const absoluteOnly = { name: 'write_file', inputSchema: object({ file_path: str, content: str }) };
    for (const offered of [claude, [gemini[0], absoluteOnly], codex, codexExec]) {
      const call = writeCall('dir/a.txt', 'x', offered);
      expect(typeof call).not.toBe('string');
      expect(shellTools).toContain(typeof call === 'string' ? '' : call.toolName);
    }
  });

  it('writes exactly the content through a real shell, however it is quoted', () => {
    const content = 'line one\n  $HOME `x` \'quoted\' "double"\nPADDOCK_EOF\n';
    const call = writeCall("sub dir/it's.txt", content, claude);
    if (typeof call === 'string') throw new Error(call);
    const cwd = mkdtempSync(join(tmpdir(), 'paddock-write-'));
    execFileSync('bash', ['-lc', String(call.input.command)], { cwd });
    expect(readFileSync(join(cwd, "sub dir/it's.txt"), 'utf8')).toBe(content);
  });

  it('writes through the shell without command substitution, which Gemini CLI refuses to run', () => {
    for (const path of ['a.txt', 'sub/dir/a.txt']) {
      const call = writeCall(path, 'x\n', claude);
      if (typeof call === 'string') throw new Error(call);
      expect(String(call.input.command)).not.toMatch(/\$\(|`/);
      const cwd = mkdtempSync(join(tmpdir(), 'paddock-write-'));
      execFileSync('bash', ['-c', String(call.input.command)], { cwd });
      expect(readFileSync(join(cwd, path), 'utf8')).toBe('x\n');
    }
  });

  it("writes through the shell in a form Claude Code's Bash parses outside bypassPermissions", () => {
    // Claude Code 2.1.197 (acceptEdits) answered "Parser did not consume trailing input" to
    // `mkdir -p "$(dirname 'a')" && cat > 'a' <<'EOF'…`: no `$(…)`, no `&&` before the here-document.
    expect(writeCall('notes.txt', 'x\n', claude)).toEqual({
      toolName: 'Bash',
      input: { command: "cat > 'notes.txt' <<'PADDOCK_EOF'\nx\nPADDOCK_EOF\n" },
    });
    const nested = writeCall('src/a b/n.txt', 'x\n', claude);
    if (typeof nested === 'string') throw new Error(nested);
    expect(nested.input.command).toBe(
      "mkdir -p 'src/a b'\ncat > 'src/a b/n.txt' <<'PADDOCK_EOF'\nx\nPADDOCK_EOF\n",
    );
  });

  it('answers in words when neither a write nor a shell tool was offered', () => {
    expect(writeCall('a', '', [])).toBe('::write: no file-write or shell tool was offered (offered: none)');
  });
});

const shellTools = ['Bash', 'run_shell_command', 'shell', 'exec_command'];
