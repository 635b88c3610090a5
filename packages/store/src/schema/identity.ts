export interface UsersTable {
  id: string;
  username: string;
  password_hash: string | null;
  /** Set for users of an external OpenID Connect issuer: who they are there. */
  issuer: string | null;
  subject: string | null;
  created_at: string;
}

export interface SigningKeysTable {
  kid: string;
  public_jwk: string;
  private_jwk_sealed: string;
  created_at: string;
}

export interface OrgsTable {
  id: string;
  name: string;
  created_at: string;
}

export interface OrgMembersTable {
  org_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface TeamsTable {
  id: string;
  org_id: string;
  name: string;
  created_at: string;
}

export interface TeamMembersTable {
  team_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

export interface TokensTable {
  id: string;
  kind: string;
  user_id: string;
  name: string;
  prefix: string;
  token_hash: string;
  scopes: string;
  agent_id: string | null;
  thread_id: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  /**
   * A thread token's sandbox host: `node:<id>` for this server's own (in-process) hosts, whose
   * sandboxes die with it, `runner:<id>` for a detached or self-hosted runner. Null otherwise.
   */
  holder: string | null;
}

/**
 * A failed password login, for the lockout: shared by every server node, so guesses spread over
 * nodes count together. `key` is the client's network and the username; rows age out of the window.
 */
export interface LoginFailuresTable {
  key: string;
  at: string;
}

/** A login session (D13) of the built-in issuer, or a revoked one of an external issuer. */
export interface LoginSessionsTable {
  /** The JWT's `jti`. */
  id: string;
  user_id: string;
  created_at: string;
  expires_at: string;
  revoked_at: string | null;
}
