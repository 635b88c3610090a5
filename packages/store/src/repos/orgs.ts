import type { Db } from '../store.ts';

/** The organizations a user belongs to, with their role in each, oldest first. */
export function listUserOrgs(db: Db, userId: string): Promise<{ id: string; name: string; role: string }[]> {
  return db
    .selectFrom('org_members')
    .innerJoin('orgs', 'orgs.id', 'org_members.org_id')
    .select(['orgs.id', 'orgs.name', 'org_members.role'])
    .where('org_members.user_id', '=', userId)
    .orderBy('orgs.created_at')
    .orderBy('orgs.id')
    .execute();
}

/** The user's role in the organization, or undefined when they are not a member. */
export async function findOrgRole(db: Db, orgId: string, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('org_members')
    .select('role')
    .where('org_id', '=', orgId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role;
}

export function listOrgTeams(db: Db, orgId: string): Promise<{ id: string; org_id: string; name: string }[]> {
  return db
    .selectFrom('teams')
    .select(['id', 'org_id', 'name'])
    .where('org_id', '=', orgId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export function findTeam(
  db: Db,
  teamId: string,
): Promise<{ id: string; org_id: string; name: string } | undefined> {
  return db.selectFrom('teams').select(['id', 'org_id', 'name']).where('id', '=', teamId).executeTakeFirst();
}

/** The user's role in the team, or undefined when they are not a member. */
export async function findTeamRole(db: Db, teamId: string, userId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('team_members')
    .select('role')
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return row?.role;
}
