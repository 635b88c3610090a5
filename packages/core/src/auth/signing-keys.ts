import { newId, timestamp } from '@paddock/protocol';
import { insertSigningKey, listSigningKeys, type Store } from '@paddock/store';
import {
  createLocalJWKSet,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JSONWebKeySet,
  type JWK,
  type JWTVerifyGetKey,
} from 'jose';
import type { SecretBox } from '../crypto/secret-box.ts';

export const algorithm = 'EdDSA';

/**
 * The built-in provider's Ed25519 keys, kept in the database so every server node signs and
 * verifies alike; the private half is sealed with the deployment's secret key. The first node to
 * start makes one; nodes sign with the oldest and verify with all of them.
 */
export function builtinKeys(store: Store, secrets: SecretBox) {
  let loaded: Promise<{ sign: { kid: string; privateKey: CryptoKey }; jwks: JSONWebKeySet }> | undefined;
  let lastReload = 0;

  async function load() {
    let rows = await listSigningKeys(store.db);
    if (rows.length === 0) {
      const { publicKey, privateKey } = await generateKeyPair(algorithm, {
        crv: 'Ed25519',
        extractable: true,
      });
      const kid = newId();
      const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg: algorithm, use: 'sig' };
      await insertSigningKey(store.db, {
        kid,
        public_jwk: JSON.stringify(publicJwk),
        private_jwk_sealed: secrets.seal(JSON.stringify(await exportJWK(privateKey))),
        created_at: timestamp(),
      });
      rows = await listSigningKeys(store.db);
    }
    const first = rows[0]!;
    const privateKey = (await importJWK(
      JSON.parse(secrets.open(first.private_jwk_sealed)) as JWK,
      algorithm,
    )) as CryptoKey;
    return {
      sign: { kid: first.kid, privateKey },
      jwks: { keys: rows.map((row) => JSON.parse(row.public_jwk) as JWK) },
    };
  }

  const current = () => {
    loaded ??= load().catch((error: unknown) => {
      loaded = undefined;
      throw error;
    });
    return loaded;
  };

  return {
    signingKey: async () => (await current()).sign,
    jwks: async () => (await current()).jwks,
    /** Verifies against the known keys; a key made by another node since is picked up (at most once a second). */
    keySet: (async (header, token) => {
      const { jwks } = await current();
      if (header.kid && !jwks.keys.some((k) => k.kid === header.kid) && Date.now() - lastReload > 1000) {
        lastReload = Date.now();
        loaded = undefined;
      }
      return createLocalJWKSet((await current()).jwks)(header, token);
    }) as JWTVerifyGetKey,
  };
}
