import type { Selectable } from 'kysely';
import type { AgentsTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type AgentRow = Selectable<AgentsTable>;

/** Inserts unless the team already has an agent with this spec hash; answers the agent either way. */
export async function insertOrFindAgent(db: Db, agent: AgentRow): Promise<AgentRow> {
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
  return row;
}

export function findAgent(db: Db, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Rewrites an agent's spec columns; false when another agent of the team already has this spec. */
export async function updateAgent(
  db: Db,
  id: string,
  patch: Omit<AgentRow, 'id' | 'team_id' | 'owner_user_id' | 'harness' | 'machine_kind' | 'created_at'>,
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
