import { randomBytes } from 'node:crypto';
import { newId, timestamp } from '@paddock/protocol';
import {
  findTokenByHash,
  findUserByName,
  insertOrg,
  insertOrgMember,
  insertTeam,
  insertTeamMember,
  insertUser,
  type Store,
} from '@paddock/store';
import { hashPassword } from '../crypto/password.ts';
import { hashToken } from '../crypto/tokens.ts';
import { mintToken } from './mint-token.ts';

export interface BootstrapResult {
  /** Set only on the first start: the admin's token and generated password, to print once. */
  created?: { token: string; password?: string };
  adminUserId: string;
}

/**
 * D2: on an empty database, create user `admin`, organization and team `default`, and a user-wide
 * token with every mintable scope. A configured bootstrap token is ensured on every start.
 */
export async function bootstrap(
  store: Store,
  options: {
    bootstrapToken?: string;
    adminPassword?: string;
    /**
     * Keeps the new admin's credentials (the server: in files), inside the transaction that
     * creates the admin: when it throws, nothing was created and the next start bootstraps again.
     */
    keep?: (created: NonNullable<BootstrapResult['created']>) => void | Promise<void>;
  },
): Promise<BootstrapResult> {
  return store.transaction(async (trx) => {
    let admin = await findUserByName(trx, 'admin');
    let created: BootstrapResult['created'];
    if (!admin) {
      const at = timestamp();
      const password = options.adminPassword ?? randomBytes(18).toString('base64url');
      admin = {
        id: newId(),
        username: 'admin',
        password_hash: await hashPassword(password),
        issuer: null,
        subject: null,
        created_at: at,
      };
      await insertUser(trx, admin);
      const orgId = newId();
      const teamId = newId();
      await insertOrg(trx, { id: orgId, name: 'default', created_at: at });
      await insertOrgMember(trx, { org_id: orgId, user_id: admin.id, role: 'owner', created_at: at });
      await insertTeam(trx, { id: teamId, org_id: orgId, name: 'default', created_at: at });
      await insertTeamMember(trx, { team_id: teamId, user_id: admin.id, role: 'owner', created_at: at });
      const minted = options.bootstrapToken
        ? undefined
        : await mintToken(trx, {
            kind: 'pat',
            userId: admin.id,
            name: 'bootstrap',
            scopes: ['read', 'publish', 'admin'],
          });
      created = {
        token: minted?.token ?? options.bootstrapToken!,
        password: options.adminPassword ? undefined : password,
      };
      await options.keep?.(created);
    }
    if (options.bootstrapToken && !(await findTokenByHash(trx, hashToken(options.bootstrapToken)))) {
      await mintToken(trx, {
        kind: 'pat',
        userId: admin.id,
        name: 'bootstrap',
        scopes: ['read', 'publish', 'admin'],
        plaintext: options.bootstrapToken,
      });
    }
    return { created, adminUserId: admin.id };
  });
}
