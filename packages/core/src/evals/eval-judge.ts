import type { JudgeRequest, Verdict } from '@paddock/models';

/**
 * The judge of eval runs: a model, reached through the server's model gateway, that reads a task's
 * transcript and an eval's criteria and answers a structured verdict. Rejects when the model errs
 * or gives no verdict.
 */
export interface EvalJudge {
  /** The gateway model id a run uses when it names none. */
  readonly defaultModel: string;
  judge(request: JudgeRequest): Promise<Verdict>;
}
