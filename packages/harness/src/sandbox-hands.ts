import type { Readable, Writable } from 'node:stream';

/** A program started in the sandbox, as the runner holds it. */
export interface SandboxProgram {
  /** Its pid inside the sandbox. */
  readonly pid: number;
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Its stdin, when it was started with one. */
  readonly stdin: Writable;
  readonly exited: Promise<{ code: number | null; signal: string | null }>;
  /** Whether it still runs: false once it exited, even before `exited` settles. */
  alive(): Promise<boolean>;
  /** Signals its whole process group. */
  signal(signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL'): void;
}

export interface SandboxEntry {
  name: string;
  type: 'file' | 'directory' | 'symlink' | 'other';
  size: number;
}

/**
 * What a harness may do in its thread's sandbox, through the supervisor there: start programs and
 * speak to them over their stdio, and read and write files as the sandbox's user. Every path is the
 * sandbox's; `within` is the directory a path must stay in (links followed), and a relative path is
 * taken from it. Nothing here touches the host.
 */
export interface SandboxHands {
  /** The directory of the sandbox's Node, for the programs that run on it. */
  readonly nodeDir: string;
  spawn(options: {
    argv: string[];
    env: Record<string, string>;
    cwd: string;
    stdin?: boolean;
    /** The sandbox keeps it across turns: no Stop kills it. */
    keep?: boolean;
  }): Promise<SandboxProgram>;
  readFile(within: string, path: string, maxBytes: number): Promise<{ data: Buffer; size: number }>;
  /** Replaces the file whole, atomically, making its parents. */
  writeFile(within: string, path: string, data: Buffer | string, mode?: number): Promise<void>;
  list(within: string, path: string): Promise<{ entries: SandboxEntry[]; total: number }>;
  stat(within: string, path: string): Promise<{ type: SandboxEntry['type']; size: number }>;
  /** Removes a file or a directory with everything in it; nothing there is not an error. */
  remove(within: string, path: string): Promise<void>;
  /** Makes a link at `path` to `target`, replacing what was there. */
  symlink(within: string, path: string, target: string): Promise<void>;
  /**
   * A gateway door on the sandbox's loopback, for a program started before its thread is known: it
   * refuses every request until aimed at a thread's API and token. Answers its port.
   */
  openDoor(): Promise<number>;
  aimDoor(port: number, target: { apiUrl: string; token: string }): Promise<void>;
  closeDoor(port: number): Promise<void>;
}
