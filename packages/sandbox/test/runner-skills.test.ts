import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { SkillFile } from '@paddock/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { materializeSkill } from '../src/link/runner-skills.ts';
import { makeTempRoot } from './temp-root.ts';

const files: SkillFile[] = [
  { path: 'SKILL.md', content: '---\nname: greeter\ndescription: Greets.\n---\n' },
  { path: 'bin/tool', content: Buffer.from([0, 1, 2]).toString('base64'), encoding: 'base64' },
];
/** The registry's hash: `path\0content\0` of each file by path, content in base64. */
const digest = createHash('sha256')
  .update(`SKILL.md\0${Buffer.from(files[0]!.content).toString('base64')}\0`)
  .update(`bin/tool\0${files[1]!.content}\0`)
  .digest('hex');

describe("a self-hosted runner's skill folders", () => {
  let root: Awaited<ReturnType<typeof makeTempRoot>>;
  beforeAll(async () => {
    root = await makeTempRoot('runner-skills');
  });
  afterAll(() => root.remove());

  it('writes a version once, checked against its digest, files read-only', async () => {
    const skillsDir = await root.dir('skills');
    let fetched = 0;
    const fetch = async () => {
      fetched++;
      return files;
    };
    const skill = { slug: 'greeter', creator: 'acme', version: '1.0.0', digest };
    const mount = await materializeSkill(skillsDir, skill, fetch);
    expect(mount).toEqual({ slug: 'greeter', hostDir: join(skillsDir, 'acme', 'greeter', '1.0.0') });
    expect(readFileSync(join(mount.hostDir, 'SKILL.md'), 'utf8')).toBe(files[0]!.content);
    expect([...readFileSync(join(mount.hostDir, 'bin', 'tool'))]).toEqual([0, 1, 2]);
    expect(statSync(join(mount.hostDir, 'SKILL.md')).mode & 0o777).toBe(0o444);
    // There already: not fetched again.
    await materializeSkill(skillsDir, skill, fetch);
    expect(fetched).toBe(1);
    // No staging folder is left beside it.
    expect(readdirSync(join(skillsDir, 'acme', 'greeter'))).toEqual(['1.0.0']);
  });

  it('refuses files that do not match the digest, and writes nothing', async () => {
    const skillsDir = await root.dir('refused');
    const skill = { slug: 'greeter', creator: 'acme', version: '1.0.0', digest };
    const changed = [{ ...files[0]!, content: `${files[0]!.content}changed\n` }, files[1]!];
    await expect(materializeSkill(skillsDir, skill, async () => changed)).rejects.toThrow(
      /do not match its digest/,
    );
    expect(existsSync(join(skillsDir, 'acme'))).toBe(false);
  });
});
