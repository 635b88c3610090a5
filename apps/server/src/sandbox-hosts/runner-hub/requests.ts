import type { SandboxBoot } from '@paddock/core';
import {
  type SandboxExec,
  type SandboxExecResult,
  type SteeredMessage,
  sandboxExecResultSchemas,
} from '@paddock/protocol';
import type { RunnerMessage, ServerMessage } from '@paddock/sandbox';
import type { Refuse } from './inbound.ts';
import { type Outcome, PendingRequests } from './pending.ts';

/** The runner's answers to the requests below. */
export type Answer = Extract<
  RunnerMessage,
  { type: `ensure.${string}` | 'steer.result' | 'exec.result' | 'skill.fetch' }
>;

const disconnected = (what: string): Outcome<never> => ({
  error: new Error(`the runner disconnected ${what}`),
});

/** The hub's requests that wait for a runner's answer: boots, steers and code runs. */
export class RunnerRequests {
  readonly #ensures = new PendingRequests<boolean, SandboxBoot>();
  readonly #steers = new PendingRequests<boolean>();
  readonly #execs = new PendingRequests<SandboxExecResult, SandboxExec['op']>();
  readonly #send: (runnerId: string, message: ServerMessage) => void;
  readonly #execGraceMs: number;

  constructor(options: { send(runnerId: string, message: ServerMessage): void; execGraceMs: number }) {
    this.#send = options.send;
    this.#execGraceMs = options.execGraceMs;
  }

  /** Boots the thread's sandbox on the runner; the boot's status and output reach `options`. */
  ensure(runnerId: string, threadId: string, options: SandboxBoot): Promise<boolean> {
    return this.#ensures.open(runnerId, options, (req) =>
      this.#send(runnerId, {
        type: 'ensure',
        req,
        thread_id: threadId,
        workspace_dir: options.workspaceDir,
        env: options.env,
        size: options.size,
        entrypoint: options.entrypoint,
        lifecycle: options.lifecycle,
        shared_dir: options.sharedDir,
        skills: options.skills?.map((s) => ({ slug: s.slug, host_dir: s.hostDir })),
        skill_versions: options.skillVersions?.map(({ slug, creator, version, digest }) => ({
          slug,
          creator,
          version,
          digest,
        })),
        network: options.network,
      }),
    );
  }

  steer(runnerId: string, threadId: string, turnId: string, messages: SteeredMessage[]) {
    return this.#steers.open(runnerId, undefined, (req) =>
      this.#send(runnerId, { type: 'steer', req, thread_id: threadId, turn_id: turnId, messages }),
    );
  }

  /** A code run; a runner that never answers fails it a while (`execGraceMs`) after its own timeout. */
  exec<E extends SandboxExec>(runnerId: string, threadId: string, request: E): Promise<SandboxExecResult<E>> {
    const ms = (request.op === 'run' ? request.timeout_ms : 0) + this.#execGraceMs;
    const outcome = () => ({ error: new Error('the runner did not answer the code run in time') });
    return this.#execs.open(
      runnerId,
      request.op,
      (req) => this.#send(runnerId, { type: 'exec', req, thread_id: threadId, request }),
      { ms, outcome },
    ) as Promise<SandboxExecResult<E>>;
  }

  /** An answer from `runnerId`: it counts for a request to that runner only. */
  answer(runnerId: string, answer: Answer, refuse: Refuse): void {
    switch (answer.type) {
      case 'ensure.status':
        this.#ensures.get(runnerId, answer.req)?.onStatus(answer.status);
        return;
      case 'ensure.output':
        this.#ensures
          .get(runnerId, answer.req)
          ?.onEntrypointOutput(answer.stream, answer.text, answer.exit_code);
        return;
      case 'ensure.done': {
        const { booted, error } = answer;
        this.#ensures.settle(
          runnerId,
          answer.req,
          error === undefined ? { value: booted } : { error: new Error(error) },
        );
        return;
      }
      case 'steer.result':
        this.#steers.settle(runnerId, answer.req, { value: answer.taken });
        return;
      case 'exec.result':
        this.#execResult(runnerId, answer, refuse);
        return;
      case 'skill.fetch':
        this.#skillFiles(runnerId, answer);
        return;
    }
  }

  /** The runner disconnected: its boots and code runs fail, its steers were not taken. */
  runnerGone(runnerId: string): void {
    this.#ensures.settleAll(runnerId, disconnected('while the sandbox booted'));
    this.#steers.settleAll(runnerId, { value: false });
    this.#execs.settleAll(runnerId, disconnected('during the code run'));
  }

  /**
   * A runner asks for a skill's files: only one of the thread's it is booting now (the boot's
   * request is open, and went to it), so a runner gets the skills of the threads it boots, no others.
   */
  #skillFiles(runnerId: string, { req, slug }: Extract<Answer, { type: 'skill.fetch' }>): void {
    const skill = this.#ensures.get(runnerId, req)?.skillVersions?.find((s) => s.slug === slug);
    this.#send(
      runnerId,
      skill
        ? {
            type: 'skill.files',
            req,
            slug,
            files: skill.files.map((f) => ({ path: f.path, content: f.content, encoding: 'base64' })),
          }
        : { type: 'skill.files', req, slug, error: `no boot of this runner has a skill ${slug}` },
    );
  }

  /** A code run's answer: its result is checked against what the request asked (a runner may lie). */
  #execResult(runnerId: string, answer: Extract<Answer, { type: 'exec.result' }>, refuse: Refuse): void {
    const op = this.#execs.get(runnerId, answer.req);
    if (op === undefined) return;
    const parsed =
      answer.result === undefined ? undefined : sandboxExecResultSchemas[op].safeParse(answer.result);
    if (parsed?.success) {
      this.#execs.settle(runnerId, answer.req, { value: parsed.data });
      return;
    }
    const reason = parsed ? 'the runner answered the code run with a malformed result' : answer.error;
    this.#execs.settle(runnerId, answer.req, {
      error: new Error(reason ?? 'the runner did not run the code'),
    });
    if (parsed) refuse(`exec.result: not a result of ${op}`);
  }
}
