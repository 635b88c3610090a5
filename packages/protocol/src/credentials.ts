import { z } from 'zod';
import { mintableScopes, type Scope } from './scopes.ts';

/** `POST /v2/auth/login` (D13): the built-in identity provider's password login. */
export const loginBodySchema = z.strictObject({
  username: z.string().min(1).max(200),
  password: z.string().min(1).max(1000),
});

export const loginResponseSchema = z.object({
  access_token: z.string(),
  token_type: z.literal('bearer'),
  expires_at: z.string(),
});

/**
 * `GET /v2/auth/providers` (beyond the spec): how a browser signs in here. The built-in login always;
 * an external OpenID Connect issuer when one is configured with a client id for the web app (a public
 * client: authorization code with PKCE, its access token then being the session).
 */
export const signInProvidersSchema = z.object({
  password: z.literal(true),
  oidc: z.object({ issuer: z.string(), client_id: z.string(), scope: z.string() }).nullable(),
});
export type SignInProviders = z.infer<typeof signInProvidersSchema>;

/**
 * Scopes to mint with: a comma-separated string or an array of `read`, `publish`, `admin`; anything
 * else, the internal scopes included, is refused. Omitted means `read` alone (spec Authentication 8).
 */
export const mintScopesSchema = z
  .union([z.string(), z.array(z.string())])
  .transform((value) => (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()))
  .pipe(z.array(z.enum(mintableScopes)).min(1, 'at least one scope'))
  .transform((scopes): Scope[] => [...new Set(scopes)]);

const tokenName = z.string().trim().min(1).max(100);

export const personalTokenMintBodySchema = z.strictObject({
  name: tokenName.optional(),
  scopes: mintScopesSchema.default(['read']),
});

export const personalTokenRenameBodySchema = z.strictObject({ name: tokenName });

export const tokenIdParamsSchema = z.object({ token_id: z.uuid() });

/** A personal access token as listed: never its secret. */
export const personalTokenSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
});

/** The mint answer: the plaintext token, shown this once. */
export const personalTokenCreatedSchema = personalTokenSchema.extend({ token: z.string() });

export const agentKeyMintBodySchema = z.strictObject({ name: tokenName.optional() });

export const keyIdParamsSchema = z.object({ key_id: z.uuid() });

/** An agent key as listed: by prefix, never the secret. */
export const agentKeySchema = z.object({
  id: z.uuid(),
  agent_id: z.uuid(),
  name: z.string(),
  prefix: z.string(),
  created_at: z.string(),
});

/** The mint answer (D13 `{id, prefix, key}`): the plaintext key, shown this once. */
export const agentKeyCreatedSchema = agentKeySchema.extend({ key: z.string() });
