import { type CodeCapabilities, codeRunLimits } from '@paddock/protocol';
import type { Ctx } from '../context.ts';
import type { BootServices } from '../turns/thread-sandbox.ts';
import { inSandbox, readyCodeSandbox } from './code-sandbox.ts';

/**
 * `GET /v2/tasks/{id}/code/capabilities`: the languages the task's sandbox runs, each probed there
 * once per sandbox (a missing one is listed as unavailable, with why), and the bounds of a run.
 */
export async function getCodeCapabilities(
  ctx: Ctx,
  services: BootServices,
  { taskId }: { taskId: string },
): Promise<CodeCapabilities> {
  const thread = await readyCodeSandbox(ctx, services, taskId);
  const languages = await inSandbox(ctx, thread.id, services.sandboxes.exec(thread.id, { op: 'languages' }));
  return {
    languages,
    limits: {
      default_timeout_ms: codeRunLimits.defaultTimeoutMs,
      max_timeout_ms: codeRunLimits.maxTimeoutMs,
      max_output_bytes: codeRunLimits.maxOutputBytes,
    },
  };
}
