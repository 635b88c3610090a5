import { mintToken } from '@paddock/core';
import { timestamp } from '@paddock/protocol';
import { insertOrg, insertOrgMember, insertTeam, insertTeamMember, insertUser } from '@paddock/store';
import type { TestServer } from '@paddock/testing/server';

/**
 * A user of another organization and team of the deployment, with a `read,publish` token: what
 * the admin's team holds is out of its reach, and the other way round.
 */
export async function strangerToken(
  server: TestServer,
): Promise<{ token: string; teamId: string; orgId: string }> {
  const { db } = server.paddock.services.store;
  const now = timestamp();
  const userId = crypto.randomUUID();
  const orgId = crypto.randomUUID();
  const teamId = crypto.randomUUID();
  await insertUser(db, {
    id: userId,
    username: `stranger-${userId}`,
    password_hash: null,
    issuer: null,
    subject: null,
    created_at: now,
  });
  await insertOrg(db, { id: orgId, name: `other-${orgId}`, created_at: now });
  await insertOrgMember(db, { org_id: orgId, user_id: userId, role: 'owner', created_at: now });
  await insertTeam(db, { id: teamId, org_id: orgId, name: 'other', created_at: now });
  await insertTeamMember(db, { team_id: teamId, user_id: userId, role: 'owner', created_at: now });
  const { token } = await mintToken(db, {
    kind: 'pat',
    userId,
    name: 'stranger',
    scopes: ['read', 'publish'],
  });
  return { token, teamId, orgId };
}
