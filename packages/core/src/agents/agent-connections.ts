import {
  type ChatConnectBody,
  type Connection,
  type ConnectionKind,
  connectionKinds,
  type ManageableConnectionKind,
  type MeetingConnectBody,
  timestamp,
} from '@paddock/protocol';
import {
  type AgentIntegrationRow,
  deleteAgentIntegration,
  listAgentIntegrations,
  updateAgentProfile,
  upsertAgentIntegration,
} from '@paddock/store';
import { reachableAgent } from '../auth/access.ts';
import type { Ctx, Services } from '../context.ts';

/** Why the integrations the command line cannot manage are managed elsewhere (spec rule 6). */
const unmanageable: Partial<Record<ConnectionKind, string>> = {
  code_host:
    'code host connections are not managed from the command line; this deployment has no code host integration yet',
  phone:
    'phone connections are not managed from the command line; this deployment has no phone integration yet',
};

/** What an install's sealed config holds: the credentials and what identifies the install. */
type ChatConfig = ChatConnectBody;
type MeetingConfig = MeetingConnectBody;

/** `GET /agents/{agent_id}/connections`: the connection report, one entry per integration. */
export async function listConnections(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  { agentId }: { agentId: string },
): Promise<{ items: Connection[] }> {
  const agent = await reachableAgent(ctx.store.db, ctx.actor, agentId);
  const rows = await listAgentIntegrations(ctx.store.db, [agent.id]);
  return {
    items: connectionKinds.map((kind) =>
      report(
        services,
        kind,
        rows.find((r) => r.kind === kind),
      ),
    ),
  };
}

/**
 * `PUT /agents/{agent_id}/connections/{chat|meeting}`: installs the integration, or rotates its
 * credentials in place when it is installed (idempotent). The whole config is sealed at rest;
 * the answer is the report entry, which never carries a credential.
 */
export async function connectIntegration(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  input: { agentId: string; kind: 'chat'; config: ChatConfig },
): Promise<Connection>;
export async function connectIntegration(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  input: { agentId: string; kind: 'meeting'; config: MeetingConfig },
): Promise<Connection>;
export async function connectIntegration(
  ctx: Ctx,
  services: Pick<Services, 'secrets'>,
  {
    agentId,
    kind,
    config,
  }: { agentId: string; kind: ManageableConnectionKind; config: ChatConfig | MeetingConfig },
): Promise<Connection> {
  return ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId);
    const at = timestamp(new Date(ctx.clock.now()));
    await upsertAgentIntegration(trx, {
      agent_id: agent.id,
      kind,
      config_sealed: services.secrets.seal(JSON.stringify(config)),
      at,
    });
    await updateAgentProfile(trx, agent.id, { updated_at: at });
    const [row] = (await listAgentIntegrations(trx, [agent.id])).filter((r) => r.kind === kind);
    return report(services, kind, row);
  });
}

/** `DELETE /agents/{agent_id}/connections/{chat|meeting}`: removes the install; already gone is fine too. */
export async function disconnectIntegration(
  ctx: Ctx,
  { agentId, kind }: { agentId: string; kind: ManageableConnectionKind },
): Promise<void> {
  await ctx.store.transaction(async (trx) => {
    const agent = await reachableAgent(trx, ctx.actor, agentId);
    if (await deleteAgentIntegration(trx, agent.id, kind))
      await updateAgentProfile(trx, agent.id, { updated_at: timestamp(new Date(ctx.clock.now())) });
  });
}

function report(
  services: Pick<Services, 'secrets'>,
  kind: ConnectionKind,
  row: AgentIntegrationRow | undefined,
): Connection {
  const reason = unmanageable[kind];
  const base: Connection = {
    kind,
    connected: row !== undefined,
    manageable_from_cli: reason === undefined,
    ...(reason ? { unmanageable_reason: reason } : {}),
  };
  if (!row) return base;
  const dates = { connected_at: row.created_at, updated_at: row.updated_at };
  const config = JSON.parse(services.secrets.open(row.config_sealed)) as Partial<ChatConfig & MeetingConfig>;
  // Only what identifies the install: bot_token and signing_secret never leave the server.
  if (kind === 'chat')
    return { ...base, ...dates, app_id: config.app_id ?? null, app_name: config.app_name ?? null };
  if (kind === 'meeting')
    return { ...base, ...dates, bot_name: config.bot_name, bot_image_url: config.bot_image_url ?? null };
  return { ...base, ...dates };
}
