import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testSandboxHands } from '@paddock/testing/supervisor';
import { describe, expect, it } from 'vitest';
import { editTool } from '../src/tools/edit.ts';
import { listTool } from '../src/tools/list.ts';
import { readTool } from '../src/tools/read.ts';
import { runCommand } from '../src/tools/run-command.ts';
import type { ToolContext } from '../src/tools/tool-context.ts';
import { WorkspacePathError } from '../src/tools/workspace-path.ts';
import { writeTool } from '../src/tools/write.ts';
import { tempDir } from './turn-helpers.ts';

async function context(): Promise<ToolContext> {
  return {
    sandbox: await testSandboxHands(),
    workspaceDir: await tempDir(),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    signal: new AbortController().signal,
  };
}

// The tools' execute as the AI SDK calls it, with the options it passes.
function call<T>(t: { execute?: (input: T, options: never) => unknown }, input: T): Promise<unknown> {
  return Promise.resolve(t.execute!(input, { toolCallId: 'test', messages: [], context: {} } as never));
}

describe('workspace path confinement, judged in the sandbox', () => {
  it('writes paths inside the workspace, existing or not', async () => {
    const ctx = await context();
    for (const path of ['a/b/c.txt', join(ctx.workspaceDir, 'x'), 'a/../b'])
      expect(await call(writeTool(ctx), { path, content: 'in' })).toMatch(/^wrote 2 bytes/);
    expect(await readFile(join(ctx.workspaceDir, 'a/b/c.txt'), 'utf8')).toBe('in');
    expect(await readFile(join(ctx.workspaceDir, 'b'), 'utf8')).toBe('in');
  });

  it('refuses escapes, outside absolute paths and symlinks that lead out', async () => {
    const ctx = await context();
    const { workspaceDir } = ctx;
    const outside = await tempDir('paddock-outside-');
    await symlink(outside, join(workspaceDir, 'out'));
    await symlink(join(outside, 'missing'), join(workspaceDir, 'dangling'));
    await mkdir(join(workspaceDir, 'inside'));
    await symlink(join(workspaceDir, 'inside'), join(workspaceDir, 'in-link'));
    for (const path of [
      '../x',
      '/etc/passwd',
      'a/../../x',
      'out',
      'out/new/file.txt',
      'dangling',
      'in\0side',
    ]) {
      await expect(call(writeTool(ctx), { path, content: 'x' }), path).rejects.toThrow(WorkspacePathError);
    }
    expect(await readdir(outside)).toEqual([]);
    expect(await call(writeTool(ctx), { path: 'in-link/f.txt', content: 'x' })).toMatch(/^wrote/);
    expect(await readFile(join(workspaceDir, 'inside', 'f.txt'), 'utf8')).toBe('x');
  });
});

describe('file tools', () => {
  it('reads whole files and line ranges', async () => {
    const ctx = await context();
    await writeFile(join(ctx.workspaceDir, 'f.txt'), 'one\ntwo\nthree\nfour\n');
    expect(await call(readTool(ctx), { path: 'f.txt' })).toBe('one\ntwo\nthree\nfour\n');
    expect(await call(readTool(ctx), { path: 'f.txt', offset: 2, limit: 2 })).toBe(
      'two\nthree\n[lines 2-3 of 5; pass offset to read further]',
    );
    await expect(call(readTool(ctx), { path: '../f.txt' })).rejects.toThrow(/outside the workspace/);
  });

  it('edits an exact string that occurs once, and refuses otherwise', async () => {
    const ctx = await context();
    const file = join(ctx.workspaceDir, 'code.ts');
    await writeFile(file, 'let a = 1;\nlet b = 1;\n');
    await expect(
      call(editTool(ctx), { path: 'code.ts', old_string: '= 1', new_string: '= 2' }),
    ).rejects.toThrow(/occurs 2 times/);
    await expect(
      call(editTool(ctx), { path: 'code.ts', old_string: 'let c', new_string: 'x' }),
    ).rejects.toThrow(/not found/);
    expect(
      await call(editTool(ctx), { path: 'code.ts', old_string: 'let b = 1', new_string: "let b = '$&'" }),
    ).toBe('edited code.ts');
    expect(await readFile(file, 'utf8')).toBe("let a = 1;\nlet b = '$&';\n");
  });

  it('lists entries with their type and size', async () => {
    const ctx = await context();
    await writeFile(join(ctx.workspaceDir, 'b.txt'), '12345');
    await mkdir(join(ctx.workspaceDir, 'a-dir'));
    await symlink('b.txt', join(ctx.workspaceDir, 'c-link'));
    const { entries } = (await call(listTool(ctx), {})) as { entries: unknown[] };
    expect(entries).toEqual([
      { name: 'a-dir', type: 'directory', size: expect.any(Number) },
      { name: 'b.txt', type: 'file', size: 5 },
      { name: 'c-link', type: 'symlink', size: expect.any(Number) },
    ]);
  });
});

describe('runCommand', () => {
  const base = {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    timeoutMs: 10_000,
    outputLimit: 64 * 1024,
  };

  it('merges stdout and stderr and reports the exit code', async () => {
    const cwd = await tempDir();
    const result = await runCommand('echo out; echo err >&2; exit 3', {
      ...base,
      sandbox: await testSandboxHands(),
      cwd,
      signal: new AbortController().signal,
    });
    expect(result.exit_code).toBe(3);
    expect(result.output).toContain('out\n');
    expect(result.output).toContain('err\n');
  });

  it('keeps the tail of long output and says it was cut', async () => {
    const cwd = await tempDir();
    const result = await runCommand('seq 1 100000', {
      ...base,
      sandbox: await testSandboxHands(),
      outputLimit: 1024,
      cwd,
      signal: new AbortController().signal,
    });
    expect(result.output).toMatch(/^\[output truncated: the first \d+ bytes were dropped\]\n/);
    expect(result.output.endsWith('99999\n100000\n')).toBe(true);
    expect(result.output.length).toBeLessThan(1200);
  });

  it('kills the process group on timeout and returns promptly', async () => {
    const cwd = await tempDir();
    const started = Date.now();
    const result = await runCommand('sleep 30 & sleep 30', {
      ...base,
      sandbox: await testSandboxHands(),
      timeoutMs: 200,
      cwd,
      signal: new AbortController().signal,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result.exit_code).toBe(124);
    expect(result.output).toContain('timed out after 200 ms');
  });

  it('does not wait for background processes that keep the output open', async () => {
    const cwd = await tempDir();
    const started = Date.now();
    const result = await runCommand('(sleep 5 &) ; echo started', {
      ...base,
      sandbox: await testSandboxHands(),
      cwd,
      signal: new AbortController().signal,
    });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(result).toEqual({ exit_code: 0, output: 'started\n' });
  });
});
