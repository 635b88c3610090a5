import type { Insertable, Selectable } from 'kysely';
import type { AgentsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type AgentRow = Selectable<AgentsTable>;

/**
 * Inserts unless the team already has an agent with this spec hash; answers the agent either way.
 * A new agent is granted to its own team as it is created.
 */
export async function insertOrFindAgent(
  db: Db,
  agent: Insertable<AgentsTable> & { id: string; created_at: string },
): Promise<AgentRow> {
  await db
    .insertInto('agents')
    .values(agent)
    .onConflict((oc) => oc.columns(['team_id', 'spec_hash']).doNothing())
    .execute();
  const row = await db
    .selectFrom('agents')
    .selectAll()
    .where('team_id', '=', agent.team_id)
    .where('spec_hash', '=', agent.spec_hash)
    .executeTakeFirstOrThrow();
  if (row.id === agent.id)
    await db
      .insertInto('team_agent_grants')
      .values({ team_id: row.team_id, agent_id: row.id, granted_at: agent.created_at })
      .onConflict((oc) => oc.columns(['team_id', 'agent_id']).doNothing())
      .execute();
  return row;
}

export function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Rewrites an agent's spec columns; false when another agent of the team already has this spec. */
export async function updateAgent(
  db: Db,
  id: string,
  patch: Omit<
    AgentRow,
    | 'id'
    | 'team_id'
    | 'owner_user_id'
    | 'harness'
    | 'machine_kind'
    | 'created_at'
    | 'tagline'
    | 'memory_enabled'
    | 'browser_enabled'
  >,
): Promise<boolean> {
  const clash = await db
    .selectFrom('agents as a')
    .select('a.id')
    .innerJoin('agents as self', 'self.team_id', 'a.team_id')
    .where('self.id', '=', id)
    .where('a.spec_hash', '=', patch.spec_hash)
    .where('a.id', '!=', id)
    .executeTakeFirst();
  if (clash) return false;
  await db.updateTable('agents').set(patch).where('id', '=', id).execute();
  return true;
}

/** The control-plane profile of an agent (D13): fields outside its spec and its hash. */
export async function updateAgentProfile(
  db: Db,
  id: string,
  profile: { tagline?: string | null; memory_enabled?: number; browser_enabled?: number; updated_at: string },
): Promise<void> {
  await db.updateTable('agents').set(profile).where('id', '=', id).execute();
}

/**
 * Locks the agent row for the rest of the transaction (PostgreSQL row lock; SQLite has one writer)
 * by writing it unchanged, and answers it as it now stands: writes that compare the agent's
 * revision before changing it start here, so two of them cannot both see the same revision.
 */
export function lockAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db
    .updateTable('agents')
    .set((eb) => ({ updated_at: eb.ref('updated_at') }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}
