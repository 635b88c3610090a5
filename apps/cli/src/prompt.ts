/**
 * Reading from people (D15): nothing prompts when stdin is not a terminal; `--yes` answers
 * confirmations; secrets are read without echo on a terminal, else from stdin.
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError, exitCodes } from './output.ts';

export const stdinIsTerminal = (): boolean => Boolean(process.stdin.isTTY);

/** All of stdin, one trailing newline taken off. */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Asks on the terminal (stderr); `hidden` echoes nothing of the answer. */
async function ask(question: string, hidden: boolean): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) process.stderr.write(chunk);
      callback();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    return await new Promise<string>((resolve) => {
      rl.question(question, resolve);
      muted = hidden;
    });
  } finally {
    rl.close();
    if (hidden) process.stderr.write('\n');
  }
}

/** A secret: the flag's value, else prompted without echo on a terminal, else stdin. */
export async function readSecret(flag: string | undefined, question: string): Promise<string> {
  if (flag !== undefined) return flag;
  const value = stdinIsTerminal() ? await ask(question, true) : await readStdin();
  if (value === '') throw new CliError('an empty value (give it on stdin or with a flag)', exitCodes.usage);
  return value;
}

/** A line of text prompted on a terminal; off a terminal `missing` is the usage error. */
export async function readLine(flag: string | undefined, question: string, missing: string): Promise<string> {
  if (flag !== undefined) return flag;
  if (!stdinIsTerminal()) throw new CliError(missing, exitCodes.usage);
  return ask(question, false);
}

/** Confirms a destructive step: `--yes`, or `y` on a terminal; off a terminal without `--yes`, refused. */
export async function confirm(yes: boolean | undefined, question: string): Promise<void> {
  if (yes) return;
  if (!stdinIsTerminal())
    throw new CliError(`${question}: stdin is not a terminal, pass --yes to confirm`, exitCodes.usage);
  const answer = await ask(`${question} [y/N] `, false);
  if (!/^y(es)?$/i.test(answer.trim())) throw new CliError('not confirmed', exitCodes.failed);
}
