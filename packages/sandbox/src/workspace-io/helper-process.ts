import { type ChildProcess, spawn } from 'node:child_process';
import { Readable } from 'node:stream';
import {
  encodeFrame,
  type Frame,
  FrameParser,
  type WorkspaceAnswer,
  type WorkspaceRequest,
} from '@paddock/workspace-helper';

/**
 * One workspace helper process, seen from the server: requests go one at a time; `idle` says when
 * it can take the next. It ends when the server closes its stdin, or is killed.
 */
export class HelperProcess {
  readonly child: ChildProcess;
  /** The workspace directory it holds open, as device and inode: a replaced directory is not its. */
  readonly identity: string;
  #waiting: ((frame: Frame) => void) | undefined;
  #queued: Frame[] = [];
  #alive = true;
  #stderr = '';

  /** `fds` become the helper's descriptors 3, 4, …: the workspace first. */
  constructor(argv: string[], fds: number[], identity: string) {
    this.identity = identity;
    this.child = spawn(argv[0]!, argv.slice(1), {
      stdio: ['pipe', 'pipe', 'pipe', ...fds],
      env: { PATH: '/usr/bin:/bin' },
    });
    const parser = new FrameParser();
    this.child.stdout!.on('data', (chunk: Buffer) => {
      for (const frame of parser.push(chunk)) this.#deliver(frame);
    });
    this.child.stderr!.on('data', (chunk: Buffer) => {
      this.#stderr = (this.#stderr + chunk.toString('utf8')).slice(-2000);
    });
    this.child.stdin!.on('error', () => {});
    this.child.once('error', () => this.#end());
    this.child.once('close', () => this.#end());
  }

  get alive(): boolean {
    return this.#alive;
  }

  /** Settles once the process has started (or rejects if it could not). */
  started(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.child.once('spawn', resolve);
      this.child.once('error', reject);
    });
  }

  /** Sends a request, and the upload's bytes after it (`input`); answers the first answer. */
  async request(request: WorkspaceRequest, input?: Readable): Promise<WorkspaceAnswer> {
    await this.#write(encodeFrame('J', Buffer.from(JSON.stringify(request))));
    if (input) {
      let abandoned = false;
      try {
        for await (const chunk of input) {
          const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
          for (let at = 0; at < bytes.length; at += 64 * 1024) {
            await this.#write(encodeFrame('D', bytes.subarray(at, at + 64 * 1024)));
          }
        }
      } catch {
        abandoned = true;
      }
      await this.#write(encodeFrame(abandoned ? 'A' : 'E'));
    }
    return this.#answer();
  }

  /**
   * A download's bytes, after its `content` answer: a stream that ends once the helper's `E` frame
   * and its last answer (`done`, or `failed`) are in. `finished` hears that answer first, so the
   * helper is free again before the stream ends.
   */
  download(finished: (last: WorkspaceAnswer) => void): Readable {
    const body = new Readable({ read: () => this.child.stdout!.resume() });
    const fail = (error: Error) => {
      finished({ failed: 'error', message: error.message });
      body.destroy(error);
    };
    const next = (): void => {
      this.#next().then((frame) => {
        if (frame.type === 'D') {
          if (!body.push(frame.payload)) this.child.stdout!.pause();
          next();
        } else if (frame.type === 'E') {
          this.#answer().then((last) => {
            finished(last);
            if ('done' in last) body.push(null);
            else body.destroy(new Error(`the file could not be read to its end: ${JSON.stringify(last)}`));
          }, fail);
        } else fail(new Error('the workspace helper broke its framing'));
      }, fail);
    };
    next();
    return body;
  }

  /** Closes stdin: the helper ends after the request it is serving. */
  close(): void {
    this.child.stdin!.end();
  }

  kill(): void {
    if (this.#alive) this.child.kill('SIGKILL');
  }

  async #answer(): Promise<WorkspaceAnswer> {
    const frame = await this.#next();
    if (frame.type !== 'J') throw new Error(`the workspace helper sent a ${frame.type} frame, not an answer`);
    return JSON.parse(frame.payload.toString('utf8')) as WorkspaceAnswer;
  }

  #next(): Promise<Frame> {
    const queued = this.#queued.shift();
    if (queued) return Promise.resolve(queued);
    if (!this.#alive) return Promise.reject(this.#gone());
    return new Promise((resolve, reject) => {
      this.#waiting = resolve;
      this.#rejectWaiting = reject;
    });
  }

  #rejectWaiting: ((error: Error) => void) | undefined;

  #deliver(frame: Frame): void {
    const waiting = this.#waiting;
    if (waiting) {
      this.#waiting = undefined;
      this.#rejectWaiting = undefined;
      waiting(frame);
    } else this.#queued.push(frame);
  }

  #end(): void {
    if (!this.#alive) return;
    this.#alive = false;
    const reject = this.#rejectWaiting;
    this.#waiting = undefined;
    this.#rejectWaiting = undefined;
    // Frames still in the pipe arrive before 'close'; what is waiting now waits in vain.
    reject?.(this.#gone());
  }

  #gone(): Error {
    return new Error(`the workspace helper ended: ${this.#stderr.trim() || 'no output'}`);
  }

  #write(frame: Buffer): Promise<void> {
    if (!this.#alive) return Promise.reject(this.#gone());
    const stdin = this.child.stdin!;
    return new Promise((resolve, reject) => {
      const ok = stdin.write(frame, (error) => (error ? reject(error) : undefined));
      if (ok) return resolve();
      // Until the pipe drains, or the helper is gone (the next write then fails); whichever comes
      // first takes the other's listener with it, so a long upload does not pile them up.
      const done = () => {
        stdin.off('drain', done);
        this.child.off('close', done);
        resolve();
      };
      stdin.once('drain', done);
      this.child.once('close', done);
    });
  }
}
