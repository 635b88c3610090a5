import type { SkillFile } from '@paddock/protocol';
import WebSocket from 'ws';
import type { Runner, RunnerLog } from '../runner.ts';
import { ensureSkills, ensureWorkspaceDir } from './ensure-message.ts';
import {
  parseFrame,
  type RunnerMessage,
  runnerLinkPath,
  type ServerMessage,
  serverMessageSchema,
  type TurnEntry,
} from './frames.ts';

export interface RunnerLinkOptions {
  runner: Runner;
  /** The Paddock server as this host reaches it, e.g. `http://127.0.0.1:8787`. */
  serverUrl: string;
  token: string;
  runnerId: string;
  log?: RunnerLog;
  /** Pause between connection attempts while the server is unreachable. */
  reconnectMs?: number;
  /**
   * A self-hosted runner's own folder of workspaces (one per thread id): the server's paths mean
   * nothing on this machine, and a server must not choose paths on it.
   */
  workspacesDir?: string;
  /**
   * A self-hosted runner's own folder of skill versions, which it writes from the files the server
   * sends for a boot (`ensure.skill_versions`): it does not see the server's.
   */
  skillsDir?: string;
}

/** What the runner keeps of one turn until the server has stored it. */
interface Journal {
  threadId: string;
  /** Produced, not yet acknowledged. */
  entries: TurnEntry[];
  next: number;
  /** The server on the current connection wants this turn's messages (it sent the turn, or `attach`). */
  attached: boolean;
  abandoned: boolean;
  /** The turn's result is among the entries (or was acknowledged). */
  done: boolean;
}

/**
 * The runner's end of the link to the server (`paddock runner`): it owns the sandboxes, so turns go
 * on running while the server restarts; it reconnects, says which turns it holds, and replays what
 * the server has not stored yet.
 */
export class RunnerLink {
  readonly #options: RunnerLinkOptions;
  readonly #log: RunnerLog;
  readonly #journals = new Map<string, Journal>();
  #socket: WebSocket | undefined;
  #closed = false;
  #unreachableLogged = false;
  #retry: NodeJS.Timeout | undefined;
  /** Skill files asked for (`skill.fetch`), by `<req> <slug>`, until the server answers. */
  readonly #skillFetches = new Map<
    string,
    { resolve(files: SkillFile[]): void; reject(error: Error): void }
  >();

  constructor(options: RunnerLinkOptions) {
    this.#options = options;
    this.#log = options.log ?? (() => {});
  }

  start(): void {
    this.#connect();
  }

  get connected(): boolean {
    return this.#socket !== undefined;
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#socket?.close();
  }

  #connect(): void {
    const url = new URL(runnerLinkPath, this.#options.serverUrl.replace(/^http/, 'ws'));
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${this.#options.token}` } });
    ws.on('open', () => {
      this.#socket = ws;
      this.#unreachableLogged = false;
      this.#log('info', `connected to ${this.#options.serverUrl}`);
      this.#send({
        type: 'hello',
        runner_id: this.#options.runnerId,
        sandboxes: this.#options.runner.threadIds(),
        turns: [...this.#journals]
          .filter(([, j]) => !j.abandoned)
          .map(([turnId, j]) => ({ turn_id: turnId, thread_id: j.threadId })),
      });
    });
    ws.on('message', (data) => {
      // Parsed like the server parses ours. A frame this runner cannot read (a newer server's, a
      // broken one) is logged and skipped, not a reason to drop the link and reconnect in a loop.
      const parsed = parseFrame(serverMessageSchema, data);
      if ('error' in parsed) {
        this.#log('error', `runner link: skipped a frame from the server (${parsed.error})`);
        return;
      }
      void Promise.resolve()
        .then(() => this.#handle(parsed.message))
        .catch((error: unknown) =>
          this.#log('error', `runner link: ${error instanceof Error ? error.message : String(error)}`),
        );
    });
    ws.on('error', (error) => {
      if (this.#unreachableLogged) return;
      this.#unreachableLogged = true;
      this.#log('warn', `server ${this.#options.serverUrl} unreachable (${error.message}); retrying`);
    });
    ws.on('close', (code) => {
      if (this.#socket === ws) {
        this.#socket = undefined;
        for (const journal of this.#journals.values()) journal.attached = false;
        for (const fetch of this.#skillFetches.values())
          fetch.reject(new Error('the server disconnected while sending a skill'));
        this.#skillFetches.clear();
        this.#log('warn', `disconnected from the server (${code}); turns keep running`);
      }
      if (!this.#closed) this.#retry = setTimeout(() => this.#connect(), this.#options.reconnectMs ?? 250);
    });
  }

  #fetchSkill(req: number, slug: string): Promise<SkillFile[]> {
    const key = `${req} ${slug}`;
    return new Promise((resolve, reject) => {
      if (!this.#socket) return reject(new Error('not connected to the server'));
      this.#skillFetches.set(key, { resolve, reject });
      this.#send({ type: 'skill.fetch', req, slug });
    });
  }

  #send(message: RunnerMessage): void {
    this.#socket?.send(JSON.stringify(message));
  }

  async #handle(message: ServerMessage): Promise<void> {
    const { runner } = this.#options;
    switch (message.type) {
      case 'ensure': {
        let booting = true;
        try {
          const booted = await runner.ensure(message.thread_id, {
            workspaceDir: ensureWorkspaceDir(message, this.#options.workspacesDir),
            env: { ...message.env, PADDOCK_API_URL: this.#options.serverUrl },
            size: message.size,
            entrypoint: message.entrypoint,
            lifecycle: message.lifecycle,
            sharedDir: message.shared_dir,
            skills: await ensureSkills(message, this.#options.skillsDir, (slug) =>
              this.#fetchSkill(message.req, slug),
            ),
            network: message.network,
            onNetwork: (record) =>
              this.#send({ type: 'network.request', thread_id: message.thread_id, record }),
            onStatus: (status) =>
              this.#send(
                booting
                  ? { type: 'ensure.status', req: message.req, status }
                  : { type: 'sandbox.gone', thread_id: message.thread_id, status },
              ),
            onEntrypointOutput: (stream, text, exitCode) =>
              this.#send({ type: 'ensure.output', req: message.req, stream, text, exit_code: exitCode }),
          });
          this.#send({ type: 'ensure.done', req: message.req, booted });
        } catch (error) {
          this.#send({
            type: 'ensure.done',
            req: message.req,
            booted: false,
            error: String((error as Error).message ?? error),
          });
        } finally {
          booting = false;
        }
        return;
      }
      case 'turn': {
        const turnId = message.command.turn_id;
        const journal: Journal = {
          threadId: message.thread_id,
          entries: [],
          next: 0,
          attached: true,
          abandoned: false,
          done: false,
        };
        this.#journals.set(turnId, journal);
        const active = runner.activeTurn(message.thread_id);
        if (active) {
          const busy = `the sandbox is still running an earlier turn (active_run_id ${active}), usually one a control-plane restart left behind without adopting it`;
          const error = { code: 'sandbox_busy', message: busy, retryable: true };
          this.#record(turnId, journal, {
            type: 'turn.result',
            turn_id: turnId,
            result: { stopReason: 'error', messages: [], lastAssistantText: '', error },
          });
          return;
        }
        const result = await runner.runTurn(message.thread_id, message.command, (event) =>
          this.#record(turnId, journal, { type: 'turn.event', turn_id: turnId, event }),
        );
        this.#record(turnId, journal, { type: 'turn.result', turn_id: turnId, result });
        return;
      }
      case 'attach': {
        const journal = this.#journals.get(message.turn_id);
        if (!journal) return;
        journal.attached = true;
        for (const entry of journal.entries) if (entry.index >= message.from_index) this.#send(entry);
        return;
      }
      case 'ack': {
        const journal = this.#journals.get(message.turn_id);
        if (!journal) return;
        journal.entries = journal.entries.filter((e) => e.index > message.index);
        if (journal.done && journal.entries.length === 0) {
          this.#journals.delete(message.turn_id);
        }
        return;
      }
      case 'abandon': {
        const journal = this.#journals.get(message.turn_id);
        if (!journal) return;
        journal.abandoned = true;
        journal.entries = [];
        if (journal.done) this.#journals.delete(message.turn_id);
        return;
      }
      case 'interrupt':
        runner.interrupt(message.thread_id, message.turn_id);
        return;
      case 'interrupt-orphan': {
        const active = runner.activeTurn(message.thread_id);
        const journal = active === undefined ? undefined : this.#journals.get(active);
        if (active !== undefined && (!journal || journal.abandoned))
          runner.interrupt(message.thread_id, active);
        return;
      }
      case 'skill.files': {
        const key = `${message.req} ${message.slug}`;
        const fetch = this.#skillFetches.get(key);
        this.#skillFetches.delete(key);
        if (message.files) fetch?.resolve(message.files);
        else fetch?.reject(new Error(message.error ?? `the server sent no files of skill ${message.slug}`));
        return;
      }
      case 'steer': {
        const taken = await runner.steer(message.thread_id, message.turn_id, message.messages);
        this.#send({ type: 'steer.result', req: message.req, taken });
        return;
      }
      case 'exec': {
        const answer = await runner.exec(message.thread_id, message.request).then(
          (result) => ({ result }),
          (error: unknown) => ({ error: error instanceof Error ? error.message : String(error) }),
        );
        this.#send({ type: 'exec.result', req: message.req, ...answer });
        return;
      }
    }
  }

  #record(turnId: string, journal: Journal, entry: DistributiveOmit<TurnEntry, 'index'>): void {
    if (entry.type === 'turn.result') journal.done = true;
    if (journal.abandoned) {
      if (journal.done) this.#journals.delete(turnId);
      return;
    }
    const indexed = { ...entry, index: journal.next++ } as TurnEntry;
    journal.entries.push(indexed);
    if (journal.attached) this.#send(indexed);
  }
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
