import type { Scope } from '@paddock/protocol';
import {
  type AgentRow,
  type Db,
  findAgent,
  findTeamRole,
  findThread,
  haveOrchestrationEdge,
  type ThreadRow,
} from '@paddock/store';
import type { Actor } from '../context.ts';
import { agentNotFound, PaddockError, threadNotFound } from '../errors.ts';

export function hasScope(actor: Actor, scope: Scope): boolean {
  return actor.credential.kind === 'session' || actor.credential.scopes.has(scope);
}

/**
 * Refuses a credential without `scope` (D13 wording). Routes declare their scopes and the server's
 * auth hook checks them here before any handler runs, so verbs do not check them again. The one
 * caller besides: a self-hosted runner's admission, on the runner link the hook does not guard.
 */
export function requireScope(actor: Actor, scope: Scope): void {
  if (!hasScope(actor, scope)) throw new PaddockError('scope_denied', `PAT lacks required scope: ${scope}`);
}

/** A thread the actor may reach, else 404 `Thread not found` (absent and unreachable look alike). */
export async function reachableThread(db: Db, actor: Actor, threadId: string): Promise<ThreadRow> {
  const thread = await findThread(db, threadId);
  if (!thread) throw threadNotFound();
  const binding = actor.credential.binding;
  if (binding.type === 'thread' && binding.threadId !== thread.id) throw threadNotFound();
  // An agent-bound credential reaches the threads of its agent and of its orchestration peers.
  if (
    binding.type === 'agent' &&
    binding.agentId !== thread.agent_id &&
    !(await haveOrchestrationEdge(db, binding.agentId, thread.agent_id))
  )
    throw threadNotFound();
  if (!actor.teamIds.has(thread.team_id)) throw threadNotFound();
  return thread;
}

/**
 * An agent the actor may reach, else 404 `Agent not found`. An agent-bound credential reaches its
 * agent and the agents it shares an orchestration edge with, in either direction (spec
 * Authentication 12); the user behind it must still belong to the peer's team.
 */
export async function reachableAgent(
  db: Db,
  actor: Actor,
  agentId: string,
  options: {
    /** `false` where a peer's reach ends: an agent-bound credential then reaches its own agent only (secrets). */
    peers?: boolean;
  } = {},
): Promise<AgentRow> {
  const agent = await findAgent(db, agentId);
  if (!agent) throw agentNotFound();
  const binding = actor.credential.binding;
  if (
    binding.type === 'agent' &&
    binding.agentId !== agent.id &&
    (options.peers === false || !(await haveOrchestrationEdge(db, binding.agentId, agent.id)))
  )
    throw agentNotFound();
  if (binding.type === 'thread') {
    const thread = await findThread(db, binding.threadId);
    if (thread?.agent_id !== agent.id) throw agentNotFound();
  }
  // The credential's memberships are cached for seconds: a team joined (or created) since is looked up.
  if (!actor.teamIds.has(agent.team_id) && !(await findTeamRole(db, agent.team_id, actor.userId)))
    throw agentNotFound();
  return agent;
}
