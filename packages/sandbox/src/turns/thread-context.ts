import { gatewayModels, type Models } from '@paddock/harness';
import type { ApiTarget } from '../api-proxy.ts';
import type { ThreadContext } from '../thread-sandbox.ts';

/** A thread's models, by its id and token (see `SandboxBooterOptions.models`). */
export type ThreadModels = (threadId: string, token: string) => Models;

/**
 * What a thread's turns run with besides its sandbox: the sandbox's environment, the models, and the
 * thread's MCP relay, both reached at the server as this runner reaches it (the API proxy's target,
 * with the path the thread's API URL has). Without `models` of the runner's own, the gateway.
 */
export function threadContext(input: {
  threadId: string;
  apiTarget: ApiTarget;
  models: ThreadModels | undefined;
  /** The thread's environment as the host sees it (its API URL and token). */
  hostEnv: Record<string, string>;
  /** The environment of the sandbox's processes. */
  env: Record<string, string>;
}): ThreadContext {
  const { threadId, hostEnv, env } = input;
  const { host, port } = input.apiTarget;
  const path = hostEnv.PADDOCK_API_URL ? new URL(hostEnv.PADDOCK_API_URL).pathname.replace(/\/$/, '') : '';
  const api = `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;
  const token = hostEnv.PADDOCK_TOKEN ?? '';
  return {
    env,
    workspaceDir: env.PADDOCK_WORKSPACE ?? '',
    models: input.models?.(threadId, token) ?? gatewayModels(`${api}/v2/gateway/openai/v1`, token),
    relay: {
      url: (server) => `${api}/v2/threads/${threadId}/mcp/${encodeURIComponent(server)}`,
      token,
    },
  };
}
