import { timestamp } from '@paddock/protocol';
import { finishEvalRun, listMessages } from '@paddock/store';
import type { Services } from '../context.ts';
import { inTranscript } from '../threads/get-thread.ts';

/** How long a judge may take before its run fails. */
export const judgeTimeoutMs = 120_000;

/** One run to judge: the run's id, its task, the eval's criteria and the judge model. */
export interface JudgeJob {
  runId: string;
  taskId: string;
  criteria: string;
  model: string;
}

/** What judging uses: a store and log of its own, as it runs on after the request that started it has answered. */
export type JudgeServices = Pick<Services, 'store' | 'log' | 'judge'>;

/**
 * Judges each run in the background (the request that started them has answered): the task's
 * transcript as it stands now against the eval's criteria. The run becomes `passed` with the
 * verdict when the judge answered, `failed` with the error when it did not.
 */
export function judgeEvalRuns(services: JudgeServices, jobs: JudgeJob[]): Promise<void> {
  return Promise.all(jobs.map((job) => judgeOne(services, job))).then(() => undefined);
}

async function judgeOne(services: JudgeServices, job: JudgeJob): Promise<void> {
  try {
    let outcome: Parameters<typeof finishEvalRun>[2];
    try {
      const transcript = (await listMessages(services.store.db, job.taskId))
        .filter(inTranscript)
        .map((m) => ({ role: m.role, content: m.content }));
      const verdict = await services.judge.judge({
        model: job.model,
        criteria: job.criteria,
        transcript,
        signal: AbortSignal.timeout(judgeTimeoutMs),
      });
      outcome = {
        status: 'passed',
        passed: verdict.passed ? 1 : 0,
        reason: verdict.reason,
        error: null,
        finished_at: timestamp(),
      };
    } catch (error) {
      outcome = {
        status: 'failed',
        passed: null,
        reason: null,
        error: error instanceof Error ? error.message : String(error),
        finished_at: timestamp(),
      };
    }
    await finishEvalRun(services.store.db, job.runId, outcome);
  } catch (error) {
    services.log.error({ err: error, run: job.runId }, 'eval run: could not record the judge’s answer');
  }
}
