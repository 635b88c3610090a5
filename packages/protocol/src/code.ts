import { z } from 'zod';

/** Languages a code run takes (`POST /v2/tasks/{id}/code/run/sync`). */
export const codeLanguages = ['bash', 'python3', 'node'] as const;
export type CodeLanguage = (typeof codeLanguages)[number];

/** Bounds of a code run; `GET /v2/tasks/{id}/code/capabilities` reports them. */
export const codeRunLimits = {
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 300_000,
  /** stdout and stderr each keep at most this many bytes: their end, as the agent's shell does. */
  maxOutputBytes: 1024 * 1024,
  maxCodeChars: 1_000_000,
} as const;

export const codeRunBodySchema = z.strictObject({
  language: z.enum(codeLanguages),
  code: z.string().min(1).max(codeRunLimits.maxCodeChars),
  /** Default 30 s, at most 300 s; on timeout the run's whole process group is killed. */
  timeout_ms: z.number().int().min(1).max(codeRunLimits.maxTimeoutMs).optional(),
});
export type CodeRunBody = z.infer<typeof codeRunBodySchema>;

export const codeRunResultSchema = z.object({
  /** The process's exit code; 128 + n when signal n killed it; 124 when it timed out. */
  exit_code: z.number().int(),
  stdout: z.string(),
  stderr: z.string(),
  duration_ms: z.number().int(),
  timed_out: z.boolean(),
  /** stdout or stderr went over the cap and lost its beginning. */
  truncated: z.boolean(),
});
export type CodeRunResult = z.infer<typeof codeRunResultSchema>;

export const codeLanguageInfoSchema = z.object({
  language: z.enum(codeLanguages),
  available: z.boolean(),
  version: z.string().nullable(),
  /** Why the language is unavailable (what the probe printed). */
  reason: z.string().optional(),
});
export type CodeLanguageInfo = z.infer<typeof codeLanguageInfoSchema>;

export const codeCapabilitiesSchema = z.object({
  languages: z.array(codeLanguageInfoSchema),
  limits: z.object({
    default_timeout_ms: z.number().int(),
    max_timeout_ms: z.number().int(),
    max_output_bytes: z.number().int(),
  }),
});
export type CodeCapabilities = z.infer<typeof codeCapabilitiesSchema>;

/**
 * What the sandbox host is asked on behalf of the code endpoints (internal: core → runner →
 * supervisor): run a program, or probe which languages the sandbox has.
 */
export type SandboxExec =
  | { op: 'run'; language: CodeLanguage; code: string; timeout_ms: number; output_limit_bytes: number }
  | { op: 'languages' };
export type SandboxExecResult<E extends SandboxExec = SandboxExec> = E extends { op: 'run' }
  ? CodeRunResult
  : CodeLanguageInfo[];

/** `SandboxExec` and its results as schemas, for a peer that is not trusted (a self-hosted runner). */
export const sandboxExecSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('run'),
    language: z.enum(codeLanguages),
    code: z.string(),
    timeout_ms: z.number().int().positive(),
    output_limit_bytes: z.number().int().positive(),
  }),
  z.object({ op: z.literal('languages') }),
]) satisfies z.ZodType<SandboxExec>;

export const sandboxExecResultSchemas = {
  run: codeRunResultSchema,
  languages: z.array(codeLanguageInfoSchema),
} satisfies { [Op in SandboxExec['op']]: z.ZodType<SandboxExecResult<Extract<SandboxExec, { op: Op }>>> };
