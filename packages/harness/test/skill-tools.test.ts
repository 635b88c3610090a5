import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { testSandboxHands } from '@paddock/testing/supervisor';
import { describe, expect, it } from 'vitest';
import { skillCatalog } from '../src/coding-alpha/skill-catalog.ts';
import { listTool } from '../src/tools/list.ts';
import { readTool } from '../src/tools/read.ts';
import type { ToolContext } from '../src/tools/tool-context.ts';
import { writeTool } from '../src/tools/write.ts';
import { tempDir } from './turn-helpers.ts';

function call<T>(t: { execute?: (input: T, options: never) => unknown }, input: T): Promise<unknown> {
  return Promise.resolve(t.execute!(input, { toolCallId: 'test', messages: [], context: {} } as never));
}

/** A workspace and a skills folder with one skill, `lint`, whose `escape` links out of it. */
async function skillsContext(): Promise<ToolContext> {
  const skillsDir = await tempDir('paddock-skills-');
  const outside = await tempDir('paddock-outside-');
  await writeFile(join(outside, 'secret.txt'), 'secret\n');
  await mkdir(join(skillsDir, 'lint', 'scripts'), { recursive: true });
  await writeFile(
    join(skillsDir, 'lint', 'SKILL.md'),
    '---\nname: lint\ndescription: >\n  Lints the code\n  before a commit.\n---\nRun scripts/lint.sh.\n',
  );
  await writeFile(join(skillsDir, 'lint', 'scripts', 'lint.sh'), 'echo lint\n');
  await symlink(outside, join(skillsDir, 'lint', 'escape'));
  // A folder without a SKILL.md front matter is no skill.
  await mkdir(join(skillsDir, 'broken'));
  await writeFile(join(skillsDir, 'broken', 'SKILL.md'), '# no front matter\n');
  return {
    sandbox: await testSandboxHands(),
    workspaceDir: await tempDir(),
    skillsDir,
    env: {},
    signal: new AbortController().signal,
  };
}

describe('skills for Paddock’s own harnesses', () => {
  it('lists each skill with its name, description and SKILL.md path; none without a skills folder', async () => {
    const ctx = await skillsContext();
    const catalog = await skillCatalog(ctx.sandbox, ctx.skillsDir);
    expect(catalog?.split('\n').slice(1)).toEqual([
      `- lint (${join(ctx.skillsDir!, 'lint', 'SKILL.md')}): Lints the code before a commit.`,
    ]);
    expect(await skillCatalog(ctx.sandbox, undefined)).toBeUndefined();
    expect(await skillCatalog(ctx.sandbox, await tempDir('paddock-empty-'))).toBeUndefined();
  });

  it('read and list open absolute paths under the skills folder, never a link out of it; write stays in the workspace', async () => {
    const ctx = await skillsContext();
    const skill = join(ctx.skillsDir!, 'lint');
    expect(await call(readTool(ctx), { path: join(skill, 'SKILL.md') })).toContain('Run scripts/lint.sh.');
    expect(await call(listTool(ctx), { path: join(skill, 'scripts') })).toEqual({
      entries: [{ name: 'lint.sh', type: 'file', size: 10 }],
    });
    await expect(call(readTool(ctx), { path: join(skill, 'escape', 'secret.txt') })).rejects.toThrow(
      /outside/,
    );
    await expect(call(readTool(ctx), { path: join(skill, '..', '..', 'etc', 'passwd') })).rejects.toThrow(
      /outside/,
    );
    await expect(call(writeTool(ctx), { path: join(skill, 'SKILL.md'), content: 'changed' })).rejects.toThrow(
      /outside the workspace/,
    );
    // Without a skills folder the same path is outside the workspace.
    const bare = { ...ctx, skillsDir: undefined };
    await expect(call(readTool(bare), { path: join(skill, 'SKILL.md') })).rejects.toThrow(
      /outside the workspace/,
    );
  });
});
