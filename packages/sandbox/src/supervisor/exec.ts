// Code runs for `POST /v2/tasks/{id}/code/run/sync`: loaded on the first one, never at boot.
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type {
  CodeLanguage,
  CodeLanguageInfo,
  CodeRunResult,
  SandboxExec,
  SandboxExecResult,
} from '@paddock/protocol';
import { createOutputTail, runProcess } from '@paddock/run-process';
import type { SandboxContext } from './turns.ts';

type CodeRun = Extract<SandboxExec, { op: 'run' }>;

/**
 * How each language gets its program, saved to a private file first. python3 and node read it whole
 * from stdin (`-`) before running it, so imports and relative paths resolve from the workspace as
 * for a script there. bash reads its script as it goes, and the commands in it may read stdin
 * themselves, so it gets the file's path instead. Node is the sandbox's own, the project's pinned
 * one (its node_modules are bound in), not whatever `node` PATH finds there.
 */
const commands: Record<CodeLanguage, { file: string; args: (program: string) => string[]; stdin: boolean }> =
  {
    bash: { file: 'bash', args: (program) => [program], stdin: false },
    python3: { file: 'python3', args: () => ['-'], stdin: true },
    node: { file: process.execPath, args: () => ['-'], stdin: true },
  };

/**
 * Runs a program as everything else in the sandbox runs: in the workspace, with the thread's
 * environment, as the sandbox uid; beside a turn, if one runs.
 */
export async function runCode(run: CodeRun, context: SandboxContext): Promise<CodeRunResult> {
  const command = commands[run.language];
  const dir = await mkdtemp(join(tmpdir(), 'paddock-code-'));
  const program = join(dir, 'program');
  const stdout = createOutputTail(run.output_limit_bytes);
  const stderr = createOutputTail(run.output_limit_bytes);
  try {
    await writeFile(program, run.code, { mode: 0o600 });
    await using stdin = command.stdin ? await open(program, 'r') : undefined;
    const started = performance.now();
    const { exit_code, timed_out } = await runProcess(command.file, command.args(program), {
      cwd: context.workspaceDir,
      env: context.env,
      timeoutMs: run.timeout_ms,
      stdinFd: stdin?.fd,
      onStdout: stdout.push,
      onStderr: stderr.push,
    }).catch((error: NodeJS.ErrnoException) => {
      // As a shell answers a command it cannot find or start.
      stderr.push(Buffer.from(`${run.language}: cannot run ${command.file}: ${error.message}\n`));
      return { exit_code: error.code === 'ENOENT' ? 127 : 126, timed_out: false };
    });
    const duration_ms = Math.round(performance.now() - started);
    const out = stdout.tail();
    const err = stderr.tail();
    return {
      exit_code,
      stdout: out.text,
      stderr: err.text,
      duration_ms,
      timed_out,
      truncated: out.dropped > 0 || err.dropped > 0,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Programs that print the language's version, run the way code runs, so "available" means a run works. */
const versionProbes: Record<CodeLanguage, string> = {
  bash: 'printf %s "$BASH_VERSION"',
  python3: 'import platform, sys; sys.stdout.write(platform.python_version())',
  node: 'process.stdout.write(process.versions.node)',
};

/** Probed once per sandbox (this process is one sandbox): what it has does not change while it runs. */
let languages: Promise<CodeLanguageInfo[]> | undefined;

function probeLanguages(context: SandboxContext): Promise<CodeLanguageInfo[]> {
  languages ??= Promise.all(
    (Object.keys(versionProbes) as CodeLanguage[]).map(async (language): Promise<CodeLanguageInfo> => {
      const run = await runCode(
        { op: 'run', language, code: versionProbes[language], timeout_ms: 10_000, output_limit_bytes: 4096 },
        context,
      );
      const version = run.stdout.trim();
      if (run.exit_code === 0 && version) return { language, available: true, version };
      const reason = run.stderr.trim() || `the probe exited with code ${run.exit_code}`;
      return { language, available: false, version: null, reason: reason.slice(0, 500) };
    }),
  );
  return languages;
}

export async function execute<E extends SandboxExec>(
  request: E,
  context: SandboxContext,
): Promise<SandboxExecResult<E>> {
  const result = request.op === 'run' ? await runCode(request, context) : await probeLanguages(context);
  return result as SandboxExecResult<E>;
}
