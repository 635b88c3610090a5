/**
 * The judge of eval runs: a model, reached through the server's model gateway, that reads a task's
 * transcript and an eval's criteria and answers a structured verdict. Rejects when the model errs
 * or gives no verdict. Core declares what it needs; the server wires `@paddock/models`' judge.
 */
export interface EvalJudge {
  /** The gateway model id a run uses when it names none. */
  readonly defaultModel: string;
  judge(request: JudgeRequest): Promise<Verdict>;
}

export interface JudgeRequest {
  /** A gateway model id. */
  model: string;
  criteria: string;
  transcript: { role: string; content: string }[];
  signal: AbortSignal;
}

export interface Verdict {
  passed: boolean;
  reason: string;
}
