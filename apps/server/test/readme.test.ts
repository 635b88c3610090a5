import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registryConfig } from './registry-config.ts';

/**
 * The README is executable: its ```sh blocks run in order, in one bash session with a clean
 * environment, in a fresh copy of the repository's tracked files, as a new user would run them,
 * from `npm install` on. An HTML comment on the line before a block changes how it runs:
 * `<!-- readme-test: background (reason) -->` runs it in the background (`npm start`) and goes on
 * once port 8787 answers; `<!-- readme-test: skip (reason) -->` leaves it out.
 *
 * curl runs with `--fail-with-body`: an HTTP error answer fails the block, as `set -e` does any
 * other failing command. Each `# → {…}` comment's keys must appear in its block's output.
 */

const root = resolve(import.meta.dirname, '../../..');
const port = 8787;

interface Block {
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  mode: 'inline' | 'background' | 'skip';
}

function shellBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('<!-- readme-test') && lines[i + 1] !== '```sh')
      throw new Error(`README line ${i + 1}: a readme-test marker goes right before a \`\`\`sh block`);
    if (/^```(bash|shell|console|zsh)\s*$/.test(lines[i]!))
      throw new Error(`README line ${i + 1}: shell examples are \`\`\`sh blocks, which the test runs`);
    if (lines[i] !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    if (end < 0) throw new Error(`README line ${i + 1}: the block never ends`);
    const before = lines[i - 1] ?? '';
    const marker = /^<!-- readme-test: (background|skip) \(.+\) -->$/.exec(before);
    if (before.startsWith('<!-- readme-test') && !marker)
      throw new Error(`README line ${i}: a marker is <!-- readme-test: background|skip (reason) -->`);
    blocks.push({
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      mode: (marker?.[1] as 'background' | 'skip' | undefined) ?? 'inline',
    });
    i = end;
  }
  return blocks;
}

/** The keys of each `# → {…}` comment (with its indented continuation lines) in a block. */
function shownKeys(code: string): string[] {
  const keys: string[] = [];
  let inShown = false;
  for (const line of code.split('\n')) {
    const comment = /^\s*#\s(.*)$/.exec(line)?.[1];
    if (comment?.startsWith('→')) inShown = true;
    else if (!(inShown && comment?.startsWith('  '))) inShown = false;
    if (inShown) for (const m of comment!.matchAll(/"([A-Za-z_]\w*)"\s*:/g)) keys.push(m[1]!);
  }
  return [...new Set(keys)];
}

const marker = (line: number) => `@@ README block at line ${line} @@`;

/** One bash script: the blocks in order, each announced by its marker line on stdout. */
function script(blocks: Block[], dir: string): string {
  const parts = [
    'exec 2>&1',
    'curl() { command curl --show-error --fail-with-body "$@"; }',
    `readme_test_wait_port() { # pid log
  for _ in $(seq 900); do
    command curl -s -o /dev/null http://127.0.0.1:${port}/ && return 0
    kill -0 "$1" 2>/dev/null || { echo "the background block ended before port ${port} answered:"; cat "$2"; return 1; }
    sleep 0.2
  done
  echo "port ${port} did not answer within 3 minutes:"; cat "$2"; return 1
}`,
  ];
  for (const block of blocks) {
    if (block.mode === 'skip') continue;
    parts.push(`printf '\\n%s\\n' '${marker(block.line)}'`);
    if (block.mode === 'inline') {
      parts.push(block.code);
      continue;
    }
    // Its own session (process group), so that the test can stop all of it; its output in a file.
    const file = join(dir, `block-${block.line}.sh`);
    const log = join(dir, `block-${block.line}.log`);
    writeFileSync(file, `${block.code}\n`);
    parts.push(
      `setsid bash -euo pipefail ${file} > ${log} 2>&1 < /dev/null &`,
      `echo $! >> ${join(dir, 'background.pids')}`,
      `readme_test_wait_port $! ${log}`,
    );
  }
  return `${parts.join('\n')}\n`;
}

function portFree(): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(
          `port ${port} is taken (${error.code}): the README test runs the server as the README does, on ${port}; stop what listens there`,
        ),
      ),
    );
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolveFree()));
  });
}

/** Runs the script in a process group of its own (`pgids` gets it), with its output in one string. */
function run(file: string, options: { cwd: string; env: NodeJS.ProcessEnv }, pgids: number[]) {
  return new Promise<{ code: number | null; output: string }>((resolveRun) => {
    const child = spawn('bash', ['-euo', 'pipefail', file], {
      ...options,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    pgids.push(child.pid!);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('close', (code) => resolveRun({ code, output }));
  });
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

async function stopGroups(pgids: number[], signal: NodeJS.Signals, waitMs: number): Promise<boolean> {
  for (const pgid of pgids) if (groupAlive(pgid)) process.kill(-pgid, signal);
  const until = Date.now() + waitMs;
  while (pgids.some(groupAlive) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
  return !pgids.some(groupAlive);
}

function mountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((path) => path.startsWith(`${dir}/`));
}

describe('README', () => {
  const blocks = shellBlocks(readFileSync(join(root, 'README.md'), 'utf8'));
  let tmp = '';
  /** The process groups of the script and of its background blocks (the server). */
  const scriptGroup: number[] = [];
  const backgroundGroups = () => {
    try {
      return readFileSync(join(tmp, 'background.pids'), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    await portFree();
    // mkdtemp makes it 0700, like a checkout under /root: the sandboxes' users cannot reach the code
    // by its path, and the server must not need them to.
    tmp = mkdtempSync(join(tmpdir(), 'paddock-readme-'));
    expect(statSync(tmp).mode & 0o777).toBe(0o700);
    const repo = join(tmp, 'repo');
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' }).split('\0');
    for (const path of tracked.filter(Boolean)) {
      mkdirSync(dirname(join(repo, path)), { recursive: true });
      copyFileSync(join(root, path), join(repo, path));
    }
    mkdirSync(join(tmp, 'home'));
  });

  afterAll(async () => {
    if (!tmp) return;
    const groups = [...scriptGroup, ...backgroundGroups()];
    if (!(await stopGroups(groups, 'SIGTERM', 20_000))) await stopGroups(groups, 'SIGKILL', 5_000);
    for (const path of [...new Set(mountsUnder(tmp))].sort().reverse()) execFileSync('umount', ['-l', path]);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('runs every shell example as written, in order, in a fresh copy', async () => {
    expect(blocks.filter((b) => b.mode === 'background')).toHaveLength(1);
    const repo = join(tmp, 'repo');
    const scriptFile = join(tmp, 'readme.sh');
    writeFileSync(scriptFile, script(blocks, tmp));
    const env = {
      // The user's PATH, without this checkout's node_modules/.bin that npm added for vitest.
      PATH: (process.env.PATH ?? '')
        .split(':')
        .filter((dir) => !dir.includes('node_modules'))
        .join(':'),
      HOME: join(tmp, 'home'),
      // npm's cache: the same packages, without downloading them again.
      npm_config_cache: process.env.npm_config_cache ?? join(homedir(), '.npm'),
      npm_config_prefer_offline: 'true',
      // The MCP example's sandbox installs its server from this machine's npm registry, which may
      // resolve to an address that is not public: allowed here as a deployment with a mirror would.
      PADDOCK_CONFIG: await registryConfig('readme'),
    };
    const { code, output } = await run(scriptFile, { cwd: repo, env }, scriptGroup);
    const last = output.lastIndexOf('@@ README block at line ');
    expect(
      code,
      `the README's examples failed (exit ${code}) in:\n${output.slice(Math.max(last, 0)).slice(-6000)}`,
    ).toBe(0);

    const outputs = new Map<Block, string>();
    for (const block of blocks) {
      if (block.mode === 'skip') continue;
      const start = output.indexOf(marker(block.line));
      expect(start, `block at line ${block.line} never ran`).toBeGreaterThanOrEqual(0);
      const next = output.indexOf('@@ README block at line ', start + 1);
      outputs.set(block, output.slice(start, next < 0 ? undefined : next));
    }
    const outputOf = (snippet: string) => {
      const found = blocks.filter((b) => b.code.includes(snippet));
      expect(found, snippet).toHaveLength(1);
      return outputs.get(found[0]!)!;
    };

    // npm install kept package-lock.json as it was: it lists every package, for every platform.
    expect(readFileSync(join(repo, 'package-lock.json'))).toEqual(
      readFileSync(join(root, 'package-lock.json')),
    );

    for (const [block, shown] of outputs)
      for (const key of shownKeys(block.code))
        expect(shown, `block at line ${block.line} shows "${key}" in a # → comment`).toContain(`"${key}":`);

    // What the examples say happens, happened.
    const walk = outputOf('events/stream?after=0');
    expect(walk).toContain('event: turn.started');
    expect(walk).toContain('"content":"shell exited 0:\\nhello\\nhi"'); // the secret, the entrypoint's file
    expect(readFileSync(join(repo, 'a.txt'), 'utf8')).toBe('hi\n');
    expect(outputOf('/code/run/sync')).toContain('"exit_code":0,"stdout":"42\\n"');
    expect(outputOf('/eval-runs?task_id=')).toMatch(/"status":"passed","passed":true/);
    expect(outputOf('/v2/cli/tokens')).toContain('"token":"pdk_pat_');
    expect(outputOf('/v2/cli/orchestrations')).toContain('"edges":[]');
    expect(outputOf('skills.resolved')).toContain('Hello from the greeter skill'); // read in the sandbox

    // The server stops on SIGTERM, and unmounts the workspaces' volumes as it does.
    expect(await stopGroups(backgroundGroups(), 'SIGTERM', 20_000)).toBe(true);
    expect(mountsUnder(tmp)).toEqual([]);
  }, 300_000);
});
