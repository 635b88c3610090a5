/**
 * What the program prints and how it ends (D15): machine output on stdout with `--json` (one JSON
 * document, or one event a line for the streaming commands), people's output otherwise; errors on
 * stderr with the service's `detail`; colour, spinners and progress bars only on a terminal and
 * never with `NO_COLOR`.
 */
import { PaddockError } from '@paddock/sdk';
import cliProgress from 'cli-progress';
import Table from 'cli-table3';
import pc from 'picocolors';
import yoctoSpinner from 'yocto-spinner';

/** D15's exit codes. */
export const exitCodes = { ok: 0, failed: 1, usage: 2 } as const;

/** An error the program reports as it is, ending with `exitCode`. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly exitCode: number;
  constructor(message: string, exitCode: number = exitCodes.failed) {
    super(message);
    this.exitCode = exitCode;
  }
}

export type Colors = ReturnType<typeof pc.createColors>;

interface Stream {
  isTTY?: boolean;
  write(chunk: string): boolean;
}

export interface Terminal {
  stdout: Stream;
  stderr: Stream;
  env: Record<string, string | undefined>;
}

export interface Spinner {
  text(text: string): void;
  stop(): void;
}

export interface Progress {
  update(sent: number): void;
  stop(): void;
}

/** The program's output: `json` mode or people's, coloured where the stream is a terminal. */
export class Output {
  readonly json: boolean;
  /** Colours for stdout and stderr (no-ops on a non-terminal or with `NO_COLOR`). */
  readonly out: Colors;
  readonly err: Colors;
  private readonly term: Terminal;

  constructor(term: Terminal, json: boolean) {
    this.term = term;
    this.json = json;
    const colour = (stream: Stream) =>
      Boolean(stream.isTTY) && !('NO_COLOR' in term.env) && term.env.TERM !== 'dumb';
    this.out = pc.createColors(colour(term.stdout));
    this.err = pc.createColors(colour(term.stderr));
  }

  /** stderr is a terminal: spinners and bars may draw there. */
  get interactive(): boolean {
    return Boolean(this.term.stderr.isTTY) && this.term.env.TERM !== 'dumb';
  }

  /** Raw text on stdout (people's output). */
  write(text: string): void {
    this.term.stdout.write(text);
  }

  line(text = ''): void {
    this.term.stdout.write(`${text}\n`);
  }

  /** A note for people on stderr (never on stdout, which may be piped). */
  note(text: string): void {
    this.term.stderr.write(`${text}\n`);
  }

  /** One JSON document (or one NDJSON line) on stdout. */
  document(value: unknown): void {
    this.term.stdout.write(`${JSON.stringify(value)}\n`);
  }

  /** `--json`: the document; otherwise `human()`. */
  result(value: unknown, human: () => void): void {
    if (this.json) this.document(value);
    else human();
  }

  table(head: string[], rows: (string | number)[][]): void {
    const plain = !this.term.stdout.isTTY;
    const table = new Table({
      head: head.map((h) => this.out.bold(h)),
      style: { head: [], border: [] },
      ...(plain
        ? {
            chars: {
              top: '',
              'top-mid': '',
              'top-left': '',
              'top-right': '',
              bottom: '',
              'bottom-mid': '',
              'bottom-left': '',
              'bottom-right': '',
              left: '',
              'left-mid': '',
              mid: '',
              'mid-mid': '',
              right: '',
              'right-mid': '',
              middle: '  ',
            },
          }
        : {}),
    });
    table.push(...rows.map((row) => row.map(String)));
    this.line(plain ? table.toString().replace(/^ /gm, '').replace(/ +$/gm, '') : table.toString());
  }

  /** A spinner on stderr while something is under way (nothing off a terminal or with `--json`). */
  spinner(text: string): Spinner {
    if (!this.interactive || this.json) return { text: () => {}, stop: () => {} };
    const spinner = yoctoSpinner({ text, stream: this.term.stderr as NodeJS.WriteStream }).start();
    return {
      text: (next) => {
        spinner.text = next;
      },
      stop: () => void spinner.stop(),
    };
  }

  /**
   * Upload progress on stderr: a bar on a terminal; elsewhere a line each time another `step` bytes
   * are in (and at the end), never with `--json`.
   */
  progress(label: string, total: number, step: number): Progress {
    if (this.json) return { update: () => {}, stop: () => {} };
    if (!this.interactive) {
      let shown = -1;
      return {
        update: (sent) => {
          const mark = sent >= total ? Number.POSITIVE_INFINITY : Math.floor(sent / step);
          if (mark === shown) return;
          shown = mark;
          this.note(`${label}: ${sent} of ${total} bytes`);
        },
        stop: () => {},
      };
    }
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} ${this.err.cyan('{bar}')} {percentage}% | {value}/{total} bytes | {eta_formatted}`,
        stream: this.term.stderr as NodeJS.WriteStream,
        hideCursor: true,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0);
    return { update: (sent) => bar.update(sent), stop: () => bar.stop() };
  }

  /** Reports an error on stderr (with the service's code and detail) and answers the exit code. */
  fail(error: unknown): number {
    const { message, code, exitCode } = describe(error);
    this.term.stderr.write(
      `${this.err.red('paddock:')} ${message}${code ? this.err.dim(` (${code})`) : ''}\n`,
    );
    return exitCode;
  }
}

function describe(error: unknown): { message: string; code?: string; exitCode: number } {
  if (error instanceof CliError) return { message: error.message, exitCode: error.exitCode };
  if (error instanceof PaddockError) {
    const status = error.status ? `HTTP ${error.status}: ` : '';
    return { message: `${status}${error.message}`, code: error.code, exitCode: exitCodes.failed };
  }
  if (error instanceof Error && (error as { code?: string }).code?.startsWith('commander.'))
    return { message: error.message, exitCode: exitCodes.usage };
  const message = error instanceof Error ? error.message : String(error);
  return { message, exitCode: exitCodes.failed };
}
