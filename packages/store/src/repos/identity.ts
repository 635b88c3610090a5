import type { Selectable } from 'kysely';
import type { SigningKeysTable, UsersTable } from '../schema.ts';
import type { Db } from '../store.ts';

export type UserRow = Selectable<UsersTable>;

export function findUserByName(db: Db, username: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('username', '=', username).executeTakeFirst();
}

export function findUserById(db: Db, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A user of an external OpenID Connect issuer, by who they are there. */
export function findUserBySubject(db: Db, issuer: string, subject: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where('issuer', '=', issuer)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

export async function insertUser(db: Db, user: UserRow): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export type SigningKeyRow = Selectable<SigningKeysTable>;

/** Oldest first: every node signs with the first, and verifies with all. */
export function listSigningKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().orderBy('created_at').orderBy('kid').execute();
}

/** Nodes starting together may each make one; all of them are kept and verify. */
export async function insertSigningKey(db: Db, key: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(key).execute();
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

/** The deployment's first team (the bootstrap `default` one), with its organization. */
export function findFirstTeam(db: Db): Promise<{ id: string; org_id: string } | undefined> {
  return db
    .selectFrom('teams')
    .select(['id', 'org_id'])
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
}
