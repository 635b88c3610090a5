import type { ChildProcess } from 'node:child_process';

/** Waits for a one-shot child to exit, collecting its stderr; kills it and rejects after `timeoutMs`. */
export function runToExit(
  child: ChildProcess,
  timeoutMs: number,
  what: string,
): Promise<{ code: number | null; stderr: string }> {
  child.stdin?.end();
  child.stdout?.resume();
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => {
    stderr += text;
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${what} timed out`));
    }, timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${what} failed to start: ${error.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr });
    });
  });
}
