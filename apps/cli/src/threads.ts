/** Thread commands: `run`, `send`, `stop`, `watch`, `thread`. */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { type CreateThreadInput, PaddockError } from '@paddock/sdk';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { configDir } from './config.ts';
import { follow, newestSeq, outcomeExitCode } from './follow.ts';
import type { Context } from './main.ts';
import { CliError, exitCodes } from './output.ts';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An agent spec from a YAML or JSON file: the document itself, or its `agent` key. */
async function agentFromFile(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`, exitCodes.usage);
  }
  let doc: unknown;
  try {
    doc = parseYaml(text);
  } catch (error) {
    throw new CliError(`${file} is not YAML or JSON: ${(error as Error).message}`, exitCodes.usage);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new CliError(`${file} does not hold an agent (a mapping such as instructions: …)`, exitCodes.usage);
  const record = doc as Record<string, unknown>;
  return (record.agent && typeof record.agent === 'object' ? record.agent : record) as Record<
    string,
    unknown
  >;
}

/** Text from an argument, or standard input when it is `-`. */
async function textOf(value: string): Promise<string> {
  if (value !== '-') return value;
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

interface RunOptions {
  agent?: string;
  agentFile?: string;
  title?: string;
  follow: boolean;
}

async function run(ctx: Context, args: string[], opts: RunOptions): Promise<number> {
  const rest = [...args];
  let body: Pick<CreateThreadInput, 'agent' | 'agent_id'>;
  if (opts.agent && opts.agentFile)
    throw new CliError('give --agent or --agent-file, not both', exitCodes.usage);
  if (opts.agentFile) body = { agent: await agentFromFile(opts.agentFile) };
  else if (opts.agent) body = { agent_id: opts.agent };
  else {
    const target = rest.shift();
    if (!target) throw new CliError('give an agent file or an agent id', exitCodes.usage);
    if (existsSync(target)) body = { agent: await agentFromFile(target) };
    else if (uuid.test(target)) body = { agent_id: target };
    else throw new CliError(`${target} is neither a file nor an agent id`, exitCodes.usage);
  }
  if (rest.length > 1) throw new CliError('give the input as one argument (quote it)', exitCodes.usage);
  const input = rest[0] === undefined ? undefined : await textOf(rest[0]);
  const handle = await ctx.client().threads.create({ ...body, input, title: opts.title });
  if (input === undefined || !opts.follow) {
    ctx.out.result(handle, () => ctx.out.line(handle.thread_id));
    return exitCodes.ok;
  }
  if (!ctx.out.json) ctx.out.note(ctx.out.err.dim(`thread ${handle.thread_id} (agent ${handle.agent_id})`));
  const result = await follow(ctx.client(), ctx.out, handle.thread_id, {
    after: 0,
    untilSettled: true,
    spinner: true,
    signal: ctx.signal,
  });
  if (!result.status) return interrupted(ctx, handle.thread_id);
  return outcomeExitCode(result);
}

/** Ctrl-C while following: the thread goes on; say how to get back to it. */
function interrupted(ctx: Context, threadId: string): number {
  ctx.out.note(`the thread goes on: paddock watch ${threadId} (or paddock stop ${threadId})`);
  return 130;
}

async function send(
  ctx: Context,
  threadId: string,
  text: string,
  opts: { inputId?: string; follow: boolean },
): Promise<number> {
  const inputId = opts.inputId ?? randomUUID();
  if (!uuid.test(inputId)) throw new CliError('--input-id must be a UUID', exitCodes.usage);
  if (!ctx.out.json) ctx.out.note(ctx.out.err.dim(`input ${inputId}`));
  const client = ctx.client();
  const after = opts.follow ? await newestSeq(client, threadId) : 0;
  let receipt: Awaited<ReturnType<typeof client.tasks.sendInput>>;
  try {
    receipt = await client.tasks.sendInput(threadId, { messages: await textOf(text), input_id: inputId });
  } catch (error) {
    if (error instanceof PaddockError && (error.retryable || error.status === 0 || error.status >= 500))
      ctx.out.note(`it may have landed: re-run with --input-id ${inputId} (never doubled)`);
    throw error;
  }
  const summary = {
    input_id: inputId,
    replayed: receipt.replayed,
    run_started: receipt.run_started,
    status: receipt.input.status,
    turn_id: receipt.accepted_turn_id,
  };
  if (!opts.follow) {
    ctx.out.result({ ...receipt, input_id: inputId }, () =>
      ctx.out.line(`${receipt.replayed ? 'already sent' : 'sent'} ${inputId} (${receipt.input.status})`),
    );
    return exitCodes.ok;
  }
  if (!ctx.out.json) ctx.out.note(ctx.out.err.dim(`${summary.replayed ? 'already sent' : 'sent'}`));
  const result = await follow(client, ctx.out, threadId, { after, untilSettled: true, signal: ctx.signal });
  if (!result.status) return interrupted(ctx, threadId);
  return outcomeExitCode(result);
}

async function stop(ctx: Context, threadId: string, opts: { generation?: string }): Promise<number> {
  const expectedGeneration = opts.generation === undefined ? undefined : Number(opts.generation);
  if (expectedGeneration !== undefined && !Number.isInteger(expectedGeneration))
    throw new CliError('--generation must be an integer', exitCodes.usage);
  const task = await ctx.client().threads.interrupt(threadId, { expectedGeneration });
  ctx.out.result(task, () => ctx.out.line(`stopped ${threadId}`));
  return exitCodes.ok;
}

/** `watch.json`: the last seq seen, per service and thread, so `watch` resumes where it left off. */
class WatchState {
  private saved = 0;
  private readonly file: string;
  private readonly key: string;
  constructor(dir: string, baseUrl: string, threadId: string) {
    this.file = join(dir, 'watch.json');
    this.key = `${baseUrl} ${threadId}`;
  }
  private async load(): Promise<Record<string, number>> {
    try {
      return JSON.parse(await readFile(this.file, 'utf8')) as Record<string, number>;
    } catch {
      return {};
    }
  }
  async last(): Promise<number | undefined> {
    return (await this.load())[this.key];
  }
  /** Written through a temporary file and a rename: a kill mid-write keeps the previous state. */
  async save(seq: number, force = false): Promise<void> {
    if (!force && Date.now() - this.saved < 200) return;
    this.saved = Date.now();
    const state = await this.load();
    if ((state[this.key] ?? 0) >= seq && !force) return;
    state[this.key] = seq;
    await mkdir(dirname(this.file), { recursive: true, mode: 0o700 });
    const temporary = `${this.file}.${process.pid}.tmp`;
    await writeFile(temporary, JSON.stringify(state, null, 2), { mode: 0o600 });
    await rename(temporary, this.file);
  }
}

async function watch(
  ctx: Context,
  threadId: string,
  opts: { fromStart?: boolean; untilIdle?: boolean },
): Promise<number> {
  const client = ctx.client();
  const state = new WatchState(configDir(ctx.env), client.baseUrl, threadId);
  const after = opts.fromStart ? 0 : ((await state.last()) ?? 0);
  const thread = await client.threads.get(threadId);
  const settledAt = thread.status === 'running' ? undefined : await newestSeq(client, threadId);
  let last = after;
  try {
    const result = await follow(client, ctx.out, threadId, {
      after,
      untilSettled: Boolean(opts.untilIdle),
      settledAt,
      signal: ctx.signal,
      onEvent: async (event) => {
        last = event.seq;
        await state.save(event.seq, event.type === 'idle');
      },
    });
    return opts.untilIdle && !result.status ? 130 : exitCodes.ok;
  } finally {
    if (last > after) await state.save(last, true);
  }
}

async function showThread(ctx: Context, threadId: string): Promise<number> {
  const client = ctx.client();
  const [thread, messages] = await Promise.all([
    client.threads.get(threadId),
    client.threads.messages(threadId),
  ]);
  ctx.out.result({ thread, messages: messages.items }, () => {
    const c = ctx.out.out;
    ctx.out.line(`${c.bold(thread.title || thread.id)}  ${c.dim(thread.id)}`);
    ctx.out.line(`status ${thread.status}, agent ${thread.agent_id}, generation ${thread.generation}`);
    for (const message of messages.items) {
      ctx.out.line();
      ctx.out.line(c.bold(message.role === 'user' ? c.blue('you') : c.magenta(message.role)));
      ctx.out.line(message.content);
    }
  });
  return exitCodes.ok;
}

export function threadCommands(program: Command, context: () => Context): void {
  program
    .command('run')
    .description('create a thread on an agent (a YAML/JSON file, or an agent id) and follow its turn live')
    .argument(
      '[args...]',
      '<agent-file-or-id> [input] (or just [input] with --agent/--agent-file); - reads stdin',
    )
    .option('--agent <id>', 'an existing agent')
    .option('--agent-file <file>', 'an agent spec in YAML or JSON')
    .option('--title <title>', "the thread's title")
    .option('--no-follow', 'print the thread id and do not wait for the turn')
    .action(async (args: string[], opts: RunOptions) => context().exit(await run(context(), args, opts)));
  program
    .command('send')
    .description('send a follow-up (a task input, never doubled when re-run with the same --input-id)')
    .argument('<thread>', 'the thread id')
    .argument('<text>', 'the message; - reads stdin')
    .option('--input-id <uuid>', 'the input id to send (re-run with it after a lost answer)')
    .option('--follow', 'follow the turn live until the thread settles', false)
    .action(async (threadId: string, text: string, opts: { inputId?: string; follow: boolean }) =>
      context().exit(await send(context(), threadId, text, opts)),
    );
  program
    .command('stop')
    .description("stop the thread's work (retried with the same expected generation)")
    .argument('<thread>', 'the thread id')
    .option('--generation <n>', 'stop only this generation (default: the current one)')
    .action(async (threadId: string, opts: { generation?: string }) =>
      context().exit(await stop(context(), threadId, opts)),
    );
  program
    .command('watch')
    .description('follow a thread live, from where the last watch of it left off')
    .argument('<thread>', 'the thread id')
    .option('--from-start', 'replay the whole history')
    .option('--until-idle', 'end once the thread settles')
    .action(async (threadId: string, opts: { fromStart?: boolean; untilIdle?: boolean }) =>
      context().exit(await watch(context(), threadId, opts)),
    );
  program
    .command('thread')
    .description("a thread's status and transcript")
    .argument('<thread>', 'the thread id')
    .action(async (threadId: string) => context().exit(await showThread(context(), threadId)));
}
