import { mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import { insertOrg, insertOrgMember, insertTeam, insertTeamMember, insertUser } from '@paddock/store';
import type { TestServer } from '@paddock/testing/server';
import { json } from './helpers.ts';

/** A control-plane request (under `/v2/cli`) with the admin's token unless another is given. */
export function cliOf(server: TestServer) {
  return (method: string, path: string, options: { body?: unknown; token?: string | null } = {}) =>
    server.request(method, `/v2/cli${path}`, options);
}

/** Creates an agent (and an idle thread of it) through the public API; answers both ids. */
export async function createAgent(
  server: TestServer,
  spec: Record<string, unknown>,
  token?: string,
): Promise<{ agent_id: string; thread_id: string }> {
  return json(await server.request('POST', '/v2/threads', { body: { agent: spec }, token }), 201);
}

/**
 * A user of another organization and team of the deployment, with a `read,publish` token: what
 * the admin's team holds is out of its reach, and the other way round.
 */
export async function strangerToken(
  server: TestServer,
): Promise<{ token: string; teamId: string; orgId: string }> {
  const { db } = server.paddock.services.store;
  const at = timestamp();
  const userId = newId();
  const orgId = newId();
  const teamId = newId();
  await insertUser(db, {
    id: userId,
    username: `stranger-${userId}`,
    password_hash: null,
    issuer: null,
    subject: null,
    created_at: at,
  });
  await insertOrg(db, { id: orgId, name: `other-${orgId}`, created_at: at });
  await insertOrgMember(db, { org_id: orgId, user_id: userId, role: 'owner', created_at: at });
  await insertTeam(db, { id: teamId, org_id: orgId, name: 'other', created_at: at });
  await insertTeamMember(db, { team_id: teamId, user_id: userId, role: 'owner', created_at: at });
  const { token } = await mintToken(db, {
    kind: 'pat',
    userId,
    name: 'stranger',
    scopes: ['read', 'publish'],
  });
  return { token, teamId, orgId };
}
