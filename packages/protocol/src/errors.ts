import { z } from 'zod';

/**
 * The closed set of error codes Paddock answers with, and the HTTP status of each.
 * Servers throw by code; the SDK maps a status and code back to a typed error.
 */
export const errorStatus = {
  missing_token: 401,
  invalid_token: 401,
  invalid_credentials: 401,
  credits_exhausted: 402,
  scope_denied: 403,
  credential_scope_denied: 403,
  binding_denied: 403,
  jwt_required: 403,
  forbidden: 403,
  provider_not_in_rollout: 403,
  not_found: 404,
  thread_not_found: 404,
  agent_not_found: 404,
  task_not_found: 404,
  input_not_found: 404,
  token_not_found: 404,
  key_not_found: 404,
  team_not_found: 404,
  orchestration_not_found: 404,
  path_not_found: 404,
  org_not_found: 404,
  eval_not_found: 404,
  schedule_not_found: 404,
  skill_not_found: 404,
  mcp_server_not_found: 404,
  conflict: 409,
  idempotency_key_reused: 409,
  input_generation_stale: 409,
  turn_interrupt_pending: 409,
  task_recovery_required: 409,
  base_revision_conflict: 409,
  skill_version_conflict: 409,
  invalid_input_generation: 400,
  invalid_path: 400,
  invalid_env_name: 400,
  base_revision_required: 400,
  mcp_oauth_state_invalid: 400,
  orchestration_member_denied: 400,
  invalid_orchestration_edge: 400,
  not_a_file: 400,
  upload_signature_required: 401,
  upload_signature_invalid: 403,
  upload_signature_expired: 403,
  transfer_not_found: 404,
  upload_not_active: 409,
  upload_gone: 410,
  upload_too_large: 413,
  upload_failed: 500,
  task_busy: 409,
  machine_not_ready: 409,
  task_run_busy: 409,
  task_terminal_no_machine: 409,
  files_on_remote_runner: 409,
  payload_too_large: 413,
  validation: 422,
  runtime_not_supported: 422,
  size_not_offered: 422,
  network_not_allowed: 422,
  turn_interrupt_unsupported: 422,
  invalid_skill: 422,
  unknown_skill: 422,
  too_many_attempts: 429,
  sandbox_limit_reached: 429,
  provider_disabled: 503,
  provider_unavailable: 503,
  unavailable: 503,
  sandbox_unavailable: 503,
  turn_interrupt_unconfirmed: 503,
  turn_interrupt_recovery_required: 503,
  mcp_server_unreachable: 502,
  mcp_oauth_failed: 502,
  internal: 500,
} as const;
export type ErrorCode = keyof typeof errorStatus;

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
