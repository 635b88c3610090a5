import { z } from 'zod';
import { type ErrorCode, errorStatus } from './error-codes.ts';

export { type ErrorCode, errorStatus };

/** Codes whose body is a plain string `detail` (D3 wording), not a `{code, message}` object. */
export const stringDetailCodes: ReadonlySet<ErrorCode> = new Set([
  'missing_token',
  'invalid_token',
  'invalid_credentials',
  'scope_denied',
  'binding_denied',
  'not_found',
  'thread_not_found',
  'agent_not_found',
  'task_not_found',
  'input_not_found',
  'token_not_found',
  'key_not_found',
  'org_not_found',
  'team_not_found',
  'eval_not_found',
  'schedule_not_found',
  'skill_not_found',
  'orchestration_not_found',
  'transfer_not_found',
  'payload_too_large',
  'unavailable',
  'task_busy',
  'internal',
]);

/** D3: a 422 validation answer lists each problem as `{loc, msg, type}`. */
export const validationIssueSchema = z.object({
  loc: z.array(z.union([z.string(), z.number()])),
  msg: z.string(),
  type: z.string(),
});

/**
 * Every error answer's body: `detail` is a string, a `{code, message}` object (some codes add
 * fields, e.g. `replacement_task_id`), or for a request that failed validation a list of issues.
 */
export const errorBodySchema = z
  .object({
    detail: z.union([
      z.string(),
      z.looseObject({ code: z.string(), message: z.string() }),
      z.array(validationIssueSchema),
    ]),
  })
  .meta({ id: 'Error' });
