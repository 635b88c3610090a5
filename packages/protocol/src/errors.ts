/**
 * The closed set of error codes Paddock answers with, and the HTTP status of each.
 * Servers throw by code; the SDK maps a status and code back to a typed error.
 */
export const errorStatus = {
  missing_token: 401,
  invalid_token: 401,
  credits_exhausted: 402,
  scope_denied: 403,
  credential_scope_denied: 403,
  forbidden: 403,
  provider_not_in_rollout: 403,
  not_found: 404,
  thread_not_found: 404,
  agent_not_found: 404,
  task_not_found: 404,
  input_not_found: 404,
  path_not_found: 404,
  conflict: 409,
  idempotency_key_reused: 409,
  input_generation_stale: 409,
  turn_interrupt_pending: 409,
  task_recovery_required: 409,
  invalid_input_generation: 400,
  invalid_path: 400,
  not_a_file: 400,
  task_busy: 409,
  machine_not_ready: 409,
  task_run_busy: 409,
  task_terminal_no_machine: 409,
  payload_too_large: 413,
  validation: 422,
  runtime_not_supported: 422,
  turn_interrupt_unsupported: 422,
  provider_disabled: 503,
  provider_unavailable: 503,
  unavailable: 503,
  sandbox_unavailable: 503,
  turn_interrupt_unconfirmed: 503,
  turn_interrupt_recovery_required: 503,
  internal: 500,
} as const;
export type ErrorCode = keyof typeof errorStatus;

/** Codes whose body is a plain string `detail` (D3 wording), not a `{code, message}` object. */
export const stringDetailCodes: ReadonlySet<ErrorCode> = new Set([
  'missing_token',
  'invalid_token',
  'scope_denied',
  'not_found',
  'thread_not_found',
  'agent_not_found',
  'task_not_found',
  'input_not_found',
  'payload_too_large',
  'unavailable',
  'task_busy',
  'internal',
]);
