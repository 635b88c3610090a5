import { timestamp } from '@paddock/protocol';
import {
  findLiveToken,
  findOrgRole,
  findTeam,
  listLiveTokens,
  revokeLiveToken,
  type TokenRow,
} from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import { mintToken } from '../auth/mint-token.ts';
import type { Ctx, Services } from '../context.ts';
import { PaddockError } from '../errors.ts';

/**
 * Agent keys `pdk_live_…` (spec: Agent key): bound to one agent, so that its sandbox, a scheduled
 * trigger or a self-hosted runner acts for that agent alone. The plaintext is answered once; only
 * its hash is stored.
 */
export interface AgentKey {
  id: string;
  agent_id: string;
  name: string;
  prefix: string;
  created_at: string;
}

/** What an agent key may do: read, and write for its agent (start threads, run a runner). */
const agentKeyScopes = ['read', 'publish'] as const;

export async function mintAgentKey(
  ctx: Ctx,
  input: { agentId: string; name?: string },
): Promise<AgentKey & { key: string }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, input.agentId);
  // A key reaches the whole agent: a credential bound to one of its threads must not widen itself,
  // nor may an agent's key mint one for an orchestration peer it reaches (whose own peers it would
  // then reach in turn).
  const binding = ctx.actor.credential.binding;
  if (binding.type === 'thread')
    throw new PaddockError('credential_scope_denied', 'a thread-bound credential cannot mint agent keys');
  if (binding.type === 'agent' && binding.agentId !== agent.id)
    throw new PaddockError(
      'credential_scope_denied',
      'an agent-bound credential mints keys for its own agent only',
    );
  const name = input.name ?? 'agent key';
  const created_at = timestamp(new Date(ctx.clock.now()));
  const minted = await mintToken(ctx.store.db, {
    kind: 'agent',
    userId: ctx.actor.userId,
    name,
    scopes: [...agentKeyScopes],
    agentId: agent.id,
    createdAt: created_at,
  });
  return { id: minted.id, agent_id: agent.id, name, prefix: minted.prefix, created_at, key: minted.token };
}

export async function listAgentKeys(ctx: Ctx, input: { agentId: string }): Promise<{ items: AgentKey[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, input.agentId);
  const rows = await listLiveTokens(ctx.store.db, { kind: 'agent', agentId: agent.id });
  return { items: rows.map(agentKey) };
}

/**
 * Revokes an agent key. Who may (issue 10): the user who minted it, an owner or admin of the
 * organization of its agent, and a credential bound to that same agent (an agent key: the route
 * requires `publish`). Never a thread token: a sandbox must not cut off its agent's runners and
 * triggers. A teammate who reaches the agent but is none of these gets 403; a key out of the
 * caller's reach (gone, another agent's that an agent key reaches as a peer, another team's) is 404.
 */
export async function revokeAgentKey(
  ctx: Ctx,
  services: Pick<Services, 'revocations'>,
  input: { keyId: string },
): Promise<void> {
  const binding = ctx.actor.credential.binding;
  if (binding.type === 'thread')
    throw new PaddockError('credential_scope_denied', 'a thread-bound credential cannot revoke agent keys');
  const row = await findLiveToken(ctx.store.db, input.keyId);
  if (row?.kind !== 'agent' || !row.agent_id) throw keyNotFound();
  const agent = await reachableAgent(ctx.store.db, ctx.actor, row.agent_id).catch(() => {
    throw keyNotFound();
  });
  if (binding.type === 'agent') {
    // A peer's keys are not an agent key's to revoke.
    if (binding.agentId !== row.agent_id) throw keyNotFound();
  } else if (row.user_id !== ctx.actor.userId && !(await administersAgentOrg(ctx, agent.team_id)))
    throw new PaddockError(
      'forbidden',
      'only the user who minted this key, or an owner or admin of its organization, can revoke it',
    );
  if (!(await revokeLiveToken(ctx.store.db, row.id, timestamp(new Date(ctx.clock.now())))))
    throw keyNotFound();
  services.revocations.revoked();
}

async function administersAgentOrg(ctx: Ctx, teamId: string): Promise<boolean> {
  const team = await findTeam(ctx.store.db, teamId);
  const role = team && (await findOrgRole(ctx.store.db, team.org_id, ctx.actor.userId));
  return role === 'owner' || role === 'admin';
}

const keyNotFound = () => new PaddockError('key_not_found', 'Key not found');

function agentKey(row: TokenRow): AgentKey {
  return {
    id: row.id,
    agent_id: row.agent_id!,
    name: row.name,
    prefix: row.prefix,
    created_at: row.created_at,
  };
}
