import { newId, type Scope, type TokenKind, timestamp } from '@paddock/protocol';
import { type Db, insertToken } from '@paddock/store';
import { displayPrefix, generateToken, hashToken } from '../crypto/tokens.ts';

export interface MintedToken {
  id: string;
  token: string;
  prefix: string;
}

/** Mints a token and stores only its hash; the plaintext is answered once, here. */
export async function mintToken(
  db: Db,
  request: {
    kind: TokenKind;
    userId: string;
    name: string;
    scopes: Scope[];
    agentId?: string;
    threadId?: string;
    /** A chosen plaintext (the bootstrap token of D2); otherwise one is generated. */
    plaintext?: string;
    createdAt?: string;
    /** A thread token's sandbox host (see `TokensTable.holder`). */
    holder?: string;
  },
): Promise<MintedToken> {
  const token = request.plaintext ?? generateToken(request.kind);
  const id = newId();
  const prefix = displayPrefix(token);
  await insertToken(db, {
    id,
    kind: request.kind,
    user_id: request.userId,
    name: request.name,
    prefix,
    token_hash: hashToken(token),
    scopes: request.scopes.join(','),
    agent_id: request.agentId ?? null,
    thread_id: request.threadId ?? null,
    created_at: request.createdAt ?? timestamp(),
    expires_at: null,
    revoked_at: null,
    holder: request.holder ?? null,
  });
  return { id, token, prefix };
}
