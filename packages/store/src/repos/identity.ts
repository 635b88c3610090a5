import type { Selectable } from 'kysely';
import type { UsersTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type UserRow = Selectable<UsersTable>;

export function findUserByName(db: Db, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

export async function insertUser(db: Db, user: UserRow): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function insertOrg(
  db: Db,
  org: { id: string; name: string; created_at: string },
): Promise<void> {
  await db.insertInto('orgs').values(org).execute();
}

export async function insertOrgMember(
  db: Db,
  member: { org_id: string; user_id: string; role: string; created_at: string },
): Promise<void> {
  await db.insertInto('org_members').values(member).execute();
}

export async function insertTeam(
  db: Db,
  team: { id: string; org_id: string; name: string; created_at: string },
): Promise<void> {
  await db.insertInto('teams').values(team).execute();
}

export async function insertTeamMember(
  db: Db,
  member: { team_id: string; user_id: string; role: string; created_at: string },
): Promise<void> {
  await db.insertInto('team_members').values(member).execute();
}

/** The team a user's agents land in when a request names none: the oldest team they belong to. */
export async function findDefaultTeamId(db: Db, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('team_members')
    .innerJoin('teams', 'teams.id', 'team_members.team_id')
    .select('teams.id')
    .where('team_members.user_id', '=', userId)
    .orderBy('teams.created_at')
    .orderBy('teams.id')
    .limit(1)
    .executeTakeFirst();
  return row?.id;
}

export async function listTeamIds(db: Db, userId: string): Promise<string[]> {
  const rows = await db.selectFrom('team_members').select('team_id').where('user_id', '=', userId).execute();
  return rows.map((r) => r.team_id);
}

/** The organization a team belongs to. */
export async function findTeamOrgId(db: Db, teamId: string): Promise<string | undefined> {
  const row = await db.selectFrom('teams').select('org_id').where('id', '=', teamId).executeTakeFirst();
  return row?.org_id;
}
