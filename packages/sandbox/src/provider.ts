import type { RunnerCommand, SupervisorMessage } from './protocol.ts';

export type SandboxSize = 'S' | 'M' | 'L';

export interface SandboxSpec {
  /** Unique per boot; names the cgroup, so a fresh boot never collides with a half-cleaned one. */
  id: string;
  /** Host path of the thread's workspace, created by the caller. */
  workspaceDir: string;
  /** Agent secrets plus PADDOCK_API_URL and PADDOCK_TOKEN. Never logged. */
  env: Record<string, string>;
  size: SandboxSize;
  /**
   * Host path of the runner's API proxy socket. Providers that cut the network off bind it into the
   * sandbox and point PADDOCK_API_URL at the supervisor's loopback end of it; others ignore it.
   */
  apiSocket?: string;
  /** Free-form diagnostics the supervisor writes to stderr. */
  onStderr?: (text: string) => void;
}

export interface SandboxExit {
  code: number | null;
  signal: string | null;
}

/** A booted supervisor: it has already said `ready` when `create` resolves. */
export interface SandboxProcess {
  readonly id: string;
  /** The supervisor's pid as seen inside the sandbox. */
  readonly pid: number;
  /** PADDOCK_API_URL as the sandbox sees it: what to build gateway URLs from for turns. */
  readonly apiUrl: string | undefined;
  send(command: RunnerCommand): void;
  /** Messages that arrive before the first listener is attached are held for it. */
  onMessage(listener: (message: SupervisorMessage) => void): () => void;
  /** Settles when the supervisor is gone, however it went. */
  readonly exited: Promise<SandboxExit>;
  /** Kills everything inside (the whole tree, or cgroup) and removes what the boot created. */
  destroy(): Promise<void>;
}

export interface SandboxProvider {
  readonly kind: 'bwrap' | 'process';
  /** Human-readable account of what this provider isolates, for the capabilities endpoint. */
  readonly isolation: string;
  /** The URL a sandbox reaches the Paddock API at, given the server's own (with the runner's proxy). */
  apiUrlInside(hostApiUrl: string): string;
  create(spec: SandboxSpec): Promise<SandboxProcess>;
  /** Releases what the provider holds between boots (it does not destroy sandboxes it created). */
  close(): Promise<void>;
}
