import { newId, timestamp } from '@paddock/protocol';
import {
  type Db,
  findOrgRole,
  insertTeam,
  insertTeamMember,
  listOrgTeams,
  listUserOrgs,
} from '@paddock/store';
import type { Ctx } from '../context.ts';
import { PaddockError } from '../errors.ts';

export interface Org {
  id: string;
  name: string;
  role: string;
}

export interface Team {
  id: string;
  org_id: string;
  name: string;
}

/** Organization roles that may create teams in it; plain members may not (docs/decisions.md). */
export const teamCreatorRoles: ReadonlySet<string> = new Set(['owner', 'admin']);

/** `GET /orgs`: the caller's organizations, with their role in each. */
export async function listOrgs(ctx: Ctx): Promise<{ items: Org[] }> {
  return { items: await listUserOrgs(ctx.store.db, ctx.actor.userId) };
}

/** `GET /orgs/{org_id}/teams`: every team of an organization the caller belongs to. */
export async function listTeams(ctx: Ctx, { orgId }: { orgId: string }): Promise<{ items: Team[] }> {
  await orgRoleOf(ctx.store.db, ctx.actor.userId, orgId);
  return { items: await listOrgTeams(ctx.store.db, orgId) };
}

/**
 * `POST /orgs/{org_id}/teams`: an organization owner or admin creates a team and becomes its owner.
 * A credential bound to an agent or a thread acts for that resource alone and cannot.
 */
export async function createTeam(ctx: Ctx, { orgId, name }: { orgId: string; name: string }): Promise<Team> {
  // An agent- or thread-bound credential never creates teams: the route refuses it (refuseBound).
  return ctx.store.transaction(async (trx) => {
    const role = await orgRoleOf(trx, ctx.actor.userId, orgId);
    if (!teamCreatorRoles.has(role))
      throw new PaddockError(
        'forbidden',
        `only an organization owner or admin can create teams (your role: ${role})`,
      );
    const at = timestamp(new Date(ctx.clock.now()));
    const team = { id: newId(), org_id: orgId, name };
    await insertTeam(trx, { ...team, created_at: at });
    await insertTeamMember(trx, {
      team_id: team.id,
      user_id: ctx.actor.userId,
      role: 'owner',
      created_at: at,
    });
    return team;
  });
}

/** The caller's role in the organization; 404 when they are not a member (or it does not exist). */
export async function orgRoleOf(db: Db, userId: string, orgId: string): Promise<string> {
  const role = await findOrgRole(db, orgId, userId);
  if (!role) throw orgNotFound();
  return role;
}

export const orgNotFound = () => new PaddockError('org_not_found', 'Organization not found');
export const teamNotFound = () => new PaddockError('team_not_found', 'Team not found');
