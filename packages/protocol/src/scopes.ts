/** Permission scopes a token can be minted with (D2). `admin` grants nothing beyond `read`. */
export const mintableScopes = ['read', 'publish', 'admin'] as const;
/** Scopes issued only to sandbox credentials, never mintable. */
export const internalScopes = ['code:execute', 'messages:write_roles'] as const;
export type Scope = (typeof mintableScopes)[number] | (typeof internalScopes)[number];

export const tokenPrefixes = { pat: 'pdk_pat_', agent: 'pdk_live_', thread: 'pdk_thr_' } as const;
export type TokenKind = keyof typeof tokenPrefixes;
