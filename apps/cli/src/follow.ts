/**
 * Following a thread live (`run`, `watch`, `send --follow`): events as they come, rendered for
 * people (streamed text, tool calls as they start and end, a spinner while the sandbox boots) or one
 * JSON event a line; ends when the thread settles, or when the signal aborts.
 */
import type { PaddockClient, StreamedEvent } from '@paddock/sdk';
import { exitCodes, type Output, type Spinner } from './output.ts';

export interface FollowOptions {
  /** Replay stored events after this seq first (0: the whole history). */
  after: number;
  /** End once the thread settles (an `idle` event, or caught up with a thread that is not running). */
  untilSettled: boolean;
  /** The newest seq when the thread was found settled before following (ends on catching up to it). */
  settledAt?: number;
  /** Called after each event is shown (e.g. to remember its seq). */
  onEvent?: (event: StreamedEvent) => void | Promise<void>;
  signal?: AbortSignal;
  /** Show a spinner until the first output (the sandbox booting). */
  spinner?: boolean;
}

export interface FollowResult {
  /** The thread's status when following ended (undefined when it ended before it settled). */
  status?: string;
  /** The last turn's `turn.ended` stop reason. */
  stopReason?: string;
  lastSeq: number;
}

const short = (value: unknown, max = 120): string => {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const line = (text ?? '').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** Renders events for people; keeps track of whether streamed text left a line open. */
class Renderer {
  private open = false;
  private streamed = false;
  private readonly tools = new Map<string, string>();
  private lastText = '';
  private readonly out: Output;
  private readonly spinner: Spinner;
  constructor(out: Output, spinner: Spinner) {
    this.out = out;
    this.spinner = spinner;
  }

  private endLine() {
    if (this.open) this.out.line();
    this.open = false;
  }

  show(event: StreamedEvent): void {
    const c = this.out.out;
    const data = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'sandbox.status':
        this.spinner.text(`sandbox ${data.status}`);
        return;
      case 'user.message':
        this.endLine();
        this.out.line(`${c.bold(c.blue('you'))} ${data.content}`);
        return;
      case 'turn.started':
        this.streamed = false;
        this.spinner.text('working');
        return;
      case 'assistant.message.chunk': {
        this.spinner.stop();
        const parts = (data.content as { content: string }[] | undefined) ?? [];
        const text = parts.map((p) => p.content).join('');
        if (!text) return;
        this.out.write(text);
        this.open = !text.endsWith('\n');
        this.streamed = true;
        return;
      }
      case 'assistant.message':
        this.spinner.stop();
        if (!this.streamed) this.out.line(String(data.content));
        this.lastText = String(data.content);
        this.endLine();
        this.streamed = false;
        return;
      case 'tool_call.start': {
        this.spinner.stop();
        this.endLine();
        const name = String(data.name);
        this.tools.set(String(data.tool_id), name);
        this.out.line(c.cyan(`▸ ${name} ${short(data.input)}`));
        return;
      }
      case 'tool_call.end': {
        this.endLine();
        const name = this.tools.get(String(data.tool_id)) ?? 'tool';
        const exit = data.exit_code === undefined ? '' : ` exit ${data.exit_code}`;
        const ok = data.status === 'ok';
        const mark = ok ? c.green(`✓ ${name}${exit}`) : c.red(`✗ ${name}${exit}`);
        const detail = ok ? data.output : (data.error ?? data.output);
        this.out.line(`${mark}${detail ? c.dim(` ${short(detail)}`) : ''}`);
        return;
      }
      case 'entrypoint.output':
        this.endLine();
        this.out.line(c.dim(`entrypoint ${data.stream}: ${short(data.text)}`));
        return;
      case 'error':
        this.spinner.stop();
        this.endLine();
        this.out.line(c.red(`error ${data.code}: ${data.message}`));
        return;
      case 'turn.ended':
        this.endLine();
        if (data.stop_reason !== 'end_turn') this.out.line(c.yellow(`turn ended: ${data.stop_reason}`));
        return;
      case 'idle': {
        this.spinner.stop();
        this.endLine();
        const status = String(data.status);
        const colour = status === 'fail' ? c.red : status === 'success' ? c.green : c.dim;
        const summary = data.summary && data.summary !== this.lastText ? `: ${short(data.summary)}` : '';
        this.out.line(colour(`● ${status}${summary}`));
        return;
      }
      default:
        return;
    }
  }

  close(): void {
    this.spinner.stop();
    this.endLine();
  }
}

/** Follows a thread's events from `after` (see `FollowOptions`). */
export async function follow(
  client: PaddockClient,
  out: Output,
  threadId: string,
  options: FollowOptions,
): Promise<FollowResult> {
  const spinner = options.spinner ? out.spinner('starting the sandbox') : { text() {}, stop() {} };
  const renderer = new Renderer(out, spinner);
  const result: FollowResult = { lastSeq: options.after };
  const local = new AbortController();
  const stopAll = () => local.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', stopAll, { once: true });
  const settled = async () => {
    const thread = await client.threads.get(threadId);
    return thread.status === 'running' ? undefined : thread.status;
  };
  try {
    if (options.untilSettled && options.settledAt !== undefined && options.after >= options.settledAt) {
      const status = await settled();
      if (status) return { ...result, status };
    }
    for await (const event of client.threads.stream(threadId, {
      after: options.after,
      signal: local.signal,
    })) {
      if (out.json) out.document(event);
      else renderer.show(event);
      result.lastSeq = event.seq;
      if (event.type === 'turn.ended') result.stopReason = String(event.data.stop_reason);
      await options.onEvent?.(event);
      if (!options.untilSettled) continue;
      const caughtUp = options.settledAt !== undefined && event.seq >= options.settledAt;
      if (event.type === 'idle' || caughtUp) {
        const status = await settled();
        if (status) {
          result.status = status;
          break;
        }
      }
    }
  } finally {
    options.signal?.removeEventListener('abort', stopAll);
    renderer.close();
  }
  return result;
}

/**
 * `run`'s exit code by outcome: 0 when the thread settled `success` or `idle` after a turn that ended
 * normally; 1 for `fail`, `need_more_info`, a turn that ended by error, Stop or its turn limit.
 */
export function outcomeExitCode(result: FollowResult): number {
  if (result.status !== 'success' && result.status !== 'idle') return exitCodes.failed;
  if (result.stopReason !== undefined && result.stopReason !== 'end_turn') return exitCodes.failed;
  return exitCodes.ok;
}

/** The newest stored seq of a thread (0 when it has none). */
export async function newestSeq(client: PaddockClient, threadId: string): Promise<number> {
  const page = await client.tasks.events(threadId, { limit: 1, desc: true });
  return page.items[0]?.seq ?? 0;
}
