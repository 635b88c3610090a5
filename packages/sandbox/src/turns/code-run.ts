// Code runs for `POST /v2/tasks/{id}/code/run/sync`, and the probe of the languages.
import { randomBytes } from 'node:crypto';
import { runInSandbox, type SandboxHands, type SandboxRun } from '@paddock/harness';
import {
  type CodeLanguage,
  type CodeLanguageInfo,
  type CodeRunResult,
  runIdVariable,
  type SandboxExec,
  type SandboxExecResult,
} from '@paddock/protocol';
import { createOutputTail } from '@paddock/run-process';

type CodeRun = Extract<SandboxExec, { op: 'run' }>;

/** Where a code run's program is saved first: the sandbox's own /tmp, never the workspace. */
const sandboxTmp = '/tmp';

/** What runs code, as a turn's tools run: in the workspace, with the thread's environment. */
export interface CodeRunContext {
  hands: SandboxHands;
  env: Record<string, string>;
  workspaceDir: string;
  /**
   * Marks the run's processes as a code run's (its marker in their environment), so that a Stop of a
   * turn running beside it leaves them alone; answers the end of the marking.
   */
  markRun(marker: string): Promise<() => Promise<void>>;
}

/**
 * How each language gets its program, saved to a private file first. python3 and node read it whole
 * from stdin (`-`), written there from the file, so imports and relative paths resolve from the
 * workspace as for a script there. bash reads its script as it goes, and the commands in it may read
 * stdin themselves, so it gets the file's path instead. Node is the sandbox's own.
 */
function commandOf(
  language: CodeLanguage,
  program: string,
  nodeDir: string,
): { argv: string[]; stdin: boolean } {
  if (language === 'bash') return { argv: ['bash', program], stdin: false };
  if (language === 'python3') return { argv: ['python3', '-'], stdin: true };
  return { argv: [`${nodeDir}/node`, '-'], stdin: true };
}

/** Runs a program as everything else in the sandbox runs: in the workspace, as the sandbox's user, beside a turn. */
export async function runCode(run: CodeRun, context: CodeRunContext): Promise<CodeRunResult> {
  const { hands } = context;
  const dir = `paddock-code-${randomBytes(8).toString('hex')}`;
  const program = `${sandboxTmp}/${dir}/program`;
  const stdout = createOutputTail(run.output_limit_bytes);
  const stderr = createOutputTail(run.output_limit_bytes);
  const command = commandOf(run.language, program, hands.nodeDir);
  try {
    await hands.writeFile(sandboxTmp, program, run.code, 0o600);
    const started = performance.now();
    const ran = await runProgram(context, command, run, stdout.push, stderr.push).catch(
      (error: NodeJS.ErrnoException) => {
        // As a shell answers a command it cannot find or start.
        stderr.push(Buffer.from(`${run.language}: cannot run ${command.argv[0]}: ${error.message}\n`));
        return { exit_code: error.code === 'ENOENT' ? 127 : 126, timed_out: false };
      },
    );
    const duration_ms = Math.round(performance.now() - started);
    const out = stdout.tail();
    const err = stderr.tail();
    return {
      exit_code: ran.exit_code,
      stdout: out.text,
      stderr: err.text,
      duration_ms,
      timed_out: ran.timed_out,
      truncated: out.dropped > 0 || err.dropped > 0,
    };
  } finally {
    await hands.remove(sandboxTmp, dir).catch(() => {});
  }
}

/** The program, marked as the code run's, in its own process group under the run's timeout. */
async function runProgram(
  context: CodeRunContext,
  command: { argv: string[]; stdin: boolean },
  run: CodeRun,
  onStdout: (chunk: Buffer) => void,
  onStderr: (chunk: Buffer) => void,
): Promise<SandboxRun> {
  const marker = `code-${randomBytes(12).toString('hex')}`;
  const endRun = await context.markRun(marker);
  try {
    return await runInSandbox(context.hands, {
      argv: command.argv,
      env: { ...context.env, [runIdVariable]: marker },
      cwd: context.workspaceDir,
      stdin: command.stdin ? run.code : undefined,
      timeoutMs: run.timeout_ms,
      onStdout,
      onStderr,
    });
  } finally {
    void endRun().catch(() => {});
  }
}

/** Programs that print the language's version, run the way code runs, so "available" means a run works. */
const versionProbes: Record<CodeLanguage, string> = {
  bash: 'printf %s "$BASH_VERSION"',
  python3: 'import platform, sys; sys.stdout.write(platform.python_version())',
  node: 'process.stdout.write(process.versions.node)',
};

function probeLanguages(context: CodeRunContext): Promise<CodeLanguageInfo[]> {
  return Promise.all(
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
}

/** A code run, or the languages' probe (once per sandbox: `probed` keeps it; what it has does not change). */
export async function execute<E extends SandboxExec>(
  request: E,
  context: CodeRunContext,
  probed: { languages?: Promise<CodeLanguageInfo[]> },
): Promise<SandboxExecResult<E>> {
  if (request.op === 'run') return (await runCode(request, context)) as SandboxExecResult<E>;
  probed.languages ??= probeLanguages(context);
  return (await probed.languages) as SandboxExecResult<E>;
}
