import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { promisify } from 'node:util';

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

export async function waitForHttp(url: string, child: ChildProcess): Promise<void> {
  const until = Date.now() + 30_000;
  for (;;) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return;
    if (Date.now() > until || child.exitCode !== null) throw new Error(`${url} did not come up`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** Requests per second that autocannon, run as its own process, measures against one URL. */
export async function requestRate(
  url: string,
  headers: Record<string, string>,
  seconds: number,
): Promise<number> {
  const args = ['-j', '-c', '20', '-d', String(seconds)];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}=${v}`);
  const { stdout } = await promisify(execFile)('autocannon', [...args, url], { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout) as { requests: { average: number }; non2xx: number };
  if (result.non2xx > 0) throw new Error(`${url}: ${result.non2xx} responses were not 2xx`);
  return result.requests.average;
}
