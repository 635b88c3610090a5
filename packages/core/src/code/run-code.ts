import { type CodeRunBody, type CodeRunResult, codeRunLimits } from '@paddock/protocol';
import type { Ctx } from '../context.ts';
import type { BootServices } from '../turns/thread-sandbox.ts';
import { inSandbox, readyCodeSandbox } from './code-sandbox.ts';

/**
 * `POST /v2/tasks/{id}/code/run/sync`: runs a program in the task's sandbox and answers once it ends
 * or times out. It is no turn: it appends no event and may run while a turn runs.
 */
export async function runCode(
  ctx: Ctx,
  services: BootServices,
  { taskId, body }: { taskId: string; body: CodeRunBody },
): Promise<CodeRunResult> {
  const thread = await readyCodeSandbox(ctx, services, taskId);
  return inSandbox(
    ctx,
    thread.id,
    services.sandboxes.exec(thread.id, {
      op: 'run',
      language: body.language,
      code: body.code,
      timeout_ms: body.timeout_ms ?? codeRunLimits.defaultTimeoutMs,
      output_limit_bytes: codeRunLimits.maxOutputBytes,
    }),
  );
}
