import { z } from 'zod';
import { booleanQuery } from './event-queries.ts';
import { componentFileSchema, componentStatuses } from './manifests.ts';

/** An eval definition: a manifest component of type `eval`; its files are the judge's criteria. */
export const evalDefinitionSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  name: z.string(),
  files: z.array(componentFileSchema),
  hash: z.string(),
  status: z.enum(componentStatuses),
  created_at: z.string(),
  updated_at: z.string(),
  archived_at: z.string().nullable(),
});
export type EvalDefinition = z.infer<typeof evalDefinitionSchema>;

export const evalListQuerySchema = z.strictObject({ include_archived: booleanQuery.default(false) });

/**
 * `running` while the judge works (beyond the spec's two statuses), then `passed` when the judge
 * ran (its verdict in `passed`) or `failed` when it errored (`error` says why).
 */
export const evalRunStatuses = ['running', 'passed', 'failed'] as const;
export type EvalRunStatus = (typeof evalRunStatuses)[number];

export const evalRunSchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  eval_id: z.uuid(),
  eval_name: z.string(),
  /** The eval's content hash when the run started. */
  eval_hash: z.string(),
  task_id: z.uuid(),
  status: z.enum(evalRunStatuses),
  /** The verdict; null unless `status` is `passed`. */
  passed: z.boolean().nullable(),
  /** The judge's reason for its verdict. */
  reason: z.string().nullable(),
  /** Why the judge errored; null unless `status` is `failed`. */
  error: z.string().nullable(),
  judge_model: z.string(),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export type EvalRun = z.infer<typeof evalRunSchema>;

export const evalRunsQuerySchema = z.strictObject({
  task_id: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

/** `POST /agents/{agent_id}/eval-runs`: judge a task against the agent's active evals (or these). */
export const evalRunsStartBodySchema = z.strictObject({
  task_id: z.uuid(),
  eval_ids: z.array(z.uuid()).min(1).max(200).optional(),
  /** A gateway model id; the deployment's judge model when omitted. */
  judge_model: z.string().min(1).max(200).optional(),
});
export type EvalRunsStartBody = z.infer<typeof evalRunsStartBodySchema>;
