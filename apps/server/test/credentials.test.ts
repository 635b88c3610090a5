import { hashPassword, mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import { ConfigError, parseConfig } from '@paddock/server/config';
import { insertOrgMember, insertTeamMember, insertUser } from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { type OidcIssuer, startOidcIssuer } from '@paddock/testing/oidc-issuer';
import { startInjectedServer, type TestServer } from '@paddock/testing/server';
import { createLocalJWKSet, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, json } from './helpers.ts';

interface PersonalToken {
  id: string;
  name: string;
  prefix: string;
  scopes: string[];
  created_at: string;
  token?: string;
}

/** The credential is refused on the very next request (no cache: issue 10 §4). */
async function refused(server: TestServer, token: string, path = '/v2/machines/capabilities') {
  return json<{ detail: string }>(await server.request('GET', path, { token }), 401);
}

describe.each(testDatabases())('credentials on $name', (database) => {
  let server: TestServer;
  let session: string;
  beforeAll(async () => {
    server = await startInjectedServer(database);
    session = (await login(server, 'admin', 'test-password')).access_token;
  });
  afterAll(() => server.close());

  const cli = (method: string, path: string, options: { body?: unknown; token?: string | null } = {}) =>
    server.request(method, `/v2/cli${path}`, options);

  it('logs in with a password and signs an EdDSA session its JWKS verifies; a wrong password is 401', async () => {
    const answer = await login(server, 'admin', 'test-password');
    expect(answer).toMatchObject({ token_type: 'bearer', expires_at: expect.any(String) });
    const jwks = await json<{ keys: JWK[] }>(
      await server.request('GET', '/.well-known/jwks.json', { token: null }),
      200,
    );
    expect(jwks.keys[0]).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', kid: expect.any(String) });
    expect(jwks.keys[0]).not.toHaveProperty('d');
    const { payload, protectedHeader } = await jwtVerify(answer.access_token, createLocalJWKSet(jwks));
    expect(protectedHeader.alg).toBe('EdDSA');
    expect(payload.exp! - payload.iat!).toBe(3600);

    for (const body of [
      { username: 'admin', password: 'wrong-password' },
      { username: 'nobody', password: 'test-password' },
    ]) {
      const refused = await server.request('POST', '/v2/auth/login', { body, token: null });
      expect((await json<{ detail: string }>(refused, 401)).detail).toBe('invalid username or password');
    }
  });

  it('locks a username out for one client address after 10 failed logins (429 with Retry-After); other addresses and users still log in', async () => {
    const { db } = server.paddock.services.store;
    await insertUser(db, {
      id: newId(),
      username: 'guessed',
      password_hash: await hashPassword('right-password'),
      issuer: null,
      subject: null,
      created_at: timestamp(),
    });
    const attempt = (username: string, password: string, remoteAddress: string, forwardedFor?: string) =>
      server.paddock.app.inject({
        method: 'POST',
        url: '/v2/auth/login',
        payload: { username, password },
        remoteAddress,
        headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
      });
    const guesser = '203.0.113.7';
    for (let i = 0; i < 10; i++)
      expect((await attempt('guessed', `wrong-${i}`, guesser)).statusCode).toBe(401);
    const locked = await attempt('guessed', 'right-password', guesser);
    expect(locked.statusCode).toBe(429);
    expect(locked.json<{ detail: { code: string } }>().detail.code).toBe('too_many_attempts');
    expect(Number(locked.headers['retry-after'])).toBeGreaterThan(800);
    // No proxy is trusted by default: a forwarded-for header does not make the guesser someone else.
    expect((await attempt('guessed', 'right-password', guesser, '198.51.100.99')).statusCode).toBe(429);
    // The same address written IPv4-mapped is the same client.
    expect((await attempt('guessed', 'right-password', `::ffff:${guesser}`)).statusCode).toBe(429);
    expect((await attempt('guessed', 'right-password', '198.51.100.20')).statusCode).toBe(200);
    expect((await attempt('admin', 'test-password', guesser)).statusCode).toBe(200);
    // An IPv6 client is one /64: rotating through it does not reset the count.
    for (let i = 0; i < 10; i++)
      expect((await attempt('guessed', `wrong-${i}`, `2001:db8:1:2::${i + 1}`)).statusCode).toBe(401);
    expect((await attempt('guessed', 'right-password', '2001:db8:1:2:ffff::1')).statusCode).toBe(429);
    expect((await attempt('guessed', 'right-password', '2001:db8:1:3::1')).statusCode).toBe(200);
  });

  it('refuses a session signed by anyone else, or tampered with, as an invalid credential', async () => {
    const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA' })
      .setIssuer('paddock')
      .setAudience('paddock')
      .setSubject('0190c3c8-7a86-7000-8000-000000000000')
      .setExpirationTime('1h')
      .sign(privateKey);
    const [header, , signature] = session.split('.');
    const tampered = `${header}.${Buffer.from(JSON.stringify({ sub: 'x', iss: 'paddock' })).toString('base64url')}.${signature}`;
    for (const token of [forged, tampered, 'not-a-token']) {
      expect((await json<{ detail: string }>(await cli('GET', '/tokens', { token }), 401)).detail).toBe(
        'invalid or expired PAT',
      );
    }
  });

  it('mints personal tokens from a session only: default scope read, scopes fixed, secrets never listed', async () => {
    const minted = await json<PersonalToken>(
      await cli('POST', '/tokens', { body: { name: 'ci' }, token: session }),
      201,
    );
    expect(minted).toMatchObject({ name: 'ci', scopes: ['read'], token: expect.stringMatching(/^pdk_pat_/) });
    expect(minted.token!.startsWith(minted.prefix)).toBe(true);
    const both = await json<PersonalToken>(
      await cli('POST', '/tokens', { body: { name: 'both', scopes: 'read,publish' }, token: session }),
      201,
    );
    expect(both.scopes).toEqual(['read', 'publish']);
    const asArray = await json<PersonalToken>(
      await cli('POST', '/tokens', { body: { scopes: ['admin'] }, token: session }),
      201,
    );
    expect(asArray.scopes).toEqual(['admin']);

    for (const scopes of ['read,code:execute', 'messages:write_roles', 'write', '']) {
      await json(await cli('POST', '/tokens', { body: { scopes }, token: session }), 422);
    }
    // A personal token cannot manage personal tokens, whatever its scopes (the bootstrap one has all).
    for (const [method, path] of [
      ['POST', '/tokens'],
      ['GET', '/tokens'],
      ['PATCH', `/tokens/${minted.id}`],
      ['DELETE', `/tokens/${minted.id}`],
    ] as const) {
      const refused = await cli(method, path, { body: method === 'PATCH' ? { name: 'x' } : undefined });
      expect((await json<{ detail: { code: string } }>(refused, 403)).detail.code).toBe('jwt_required');
    }

    const listed = await json<{ items: PersonalToken[] }>(
      await cli('GET', '/tokens', { token: session }),
      200,
    );
    expect(listed.items.map((t) => t.id)).toEqual(expect.arrayContaining([minted.id, both.id, asArray.id]));
    expect(JSON.stringify(listed)).not.toContain(minted.token);
    expect(listed.items.every((t) => !('token' in t))).toBe(true);
  });

  it('checks the scope a token was minted with: read and admin-only are refused on writes, before anything runs', async () => {
    const mint = async (scopes: string) =>
      (await json<PersonalToken>(await cli('POST', '/tokens', { body: { scopes }, token: session }), 201))
        .token!;
    const threadsBefore = await server.paddock.services.store.db.selectFrom('threads').select('id').execute();
    for (const token of [await mint('read'), await mint('admin')]) {
      await json(await server.request('GET', '/v2/machines/capabilities', { token }), 200);
      const refused = await server.request('POST', '/v2/threads', { body: { agent: agentSpec() }, token });
      expect((await json<{ detail: string }>(refused, 403)).detail).toBe('PAT lacks required scope: publish');
    }
    const threadsAfter = await server.paddock.services.store.db.selectFrom('threads').select('id').execute();
    expect(threadsAfter).toHaveLength(threadsBefore.length);
    const writer = await mint('read,publish');
    await json(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() }, token: writer }),
      201,
    );
  });

  it('renames the label only, and revokes: the token stops working, a second revoke is 404', async () => {
    const minted = await json<PersonalToken>(
      await cli('POST', '/tokens', { body: { name: 'old', scopes: 'read,publish' }, token: session }),
      201,
    );
    await json(await server.request('GET', '/v2/machines/capabilities', { token: minted.token! }), 200);
    const renamed = await json<PersonalToken>(
      await cli('PATCH', `/tokens/${minted.id}`, { body: { name: 'new' }, token: session }),
      200,
    );
    expect(renamed).toMatchObject({
      id: minted.id,
      name: 'new',
      scopes: ['read', 'publish'],
      prefix: minted.prefix,
    });
    await json(
      await cli('PATCH', `/tokens/${minted.id}`, { body: { name: 'n', scopes: 'admin' }, token: session }),
      422,
    );

    expect((await cli('DELETE', `/tokens/${minted.id}`, { token: session })).status).toBe(204);
    expect((await refused(server, minted.token!)).detail).toBe('invalid or expired PAT');
    expect(
      (await json<{ detail: string }>(await cli('DELETE', `/tokens/${minted.id}`, { token: session }), 404))
        .detail,
    ).toBe('Token not found');
    const listed = await json<{ items: PersonalToken[] }>(
      await cli('GET', '/tokens', { token: session }),
      200,
    );
    expect(listed.items.map((t) => t.id)).not.toContain(minted.id);
  });

  it('mints agent keys bound to their agent, lists them by prefix, and revokes them once', async () => {
    const { agent_id } = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec({ instructions: 'keyed' }) } }),
      201,
    );
    const other = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec({ instructions: 'other' }) } }),
      201,
    );
    const key = await json<{ id: string; prefix: string; key: string }>(
      await cli('POST', `/agents/${agent_id}/keys`, { body: { name: 'runner' } }),
      201,
    );
    expect(key.key).toMatch(/^pdk_live_/);
    expect(key.key.startsWith(key.prefix)).toBe(true);
    const listed = await json<{ items: { id: string; prefix: string; name: string }[] }>(
      await cli('GET', `/agents/${agent_id}/keys`),
      200,
    );
    expect(listed.items).toEqual([
      expect.objectContaining({ id: key.id, prefix: key.prefix, name: 'runner' }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(key.key);

    // Bound to its agent: it starts threads of that agent, and cannot see another.
    await json(await server.request('POST', '/v2/threads', { body: { agent_id }, token: key.key }), 201);
    await json(
      await server.request('POST', '/v2/threads', { body: { agent_id: other.agent_id }, token: key.key }),
      404,
    );
    expect(
      (
        await json<{ detail: string }>(
          await cli('GET', `/agents/${other.agent_id}/keys`, { token: key.key }),
          404,
        )
      ).detail,
    ).toBe('Agent not found');

    expect((await cli('DELETE', `/keys/${key.id}`)).status).toBe(204);
    await refused(server, key.key);
    expect((await json<{ detail: string }>(await cli('DELETE', `/keys/${key.id}`), 404)).detail).toBe(
      'Key not found',
    );
    expect(
      (await json<{ items: unknown[] }>(await cli('GET', `/agents/${agent_id}/keys`), 200)).items,
    ).toEqual([]);
  });

  it('lets an agent key be revoked by its minter, organization owners and admins, and keys of its agent; not teammates nor thread tokens', async () => {
    const { db } = server.paddock.services.store;
    const admin = await db
      .selectFrom('users')
      .select('id')
      .where('username', '=', 'admin')
      .executeTakeFirstOrThrow();
    const { team_id } = await db
      .selectFrom('team_members')
      .select('team_id')
      .where('user_id', '=', admin.id)
      .executeTakeFirstOrThrow();
    const { org_id } = await db
      .selectFrom('teams')
      .select('org_id')
      .where('id', '=', team_id)
      .executeTakeFirstOrThrow();
    /** A user of the admin's team with this organization role, and a `read,publish` token of theirs. */
    async function member(role: string, password?: string) {
      const id = newId();
      const username = `${role}-${id}`;
      await insertUser(db, {
        id,
        username,
        password_hash: password ? await hashPassword(password) : null,
        issuer: null,
        subject: null,
        created_at: timestamp(),
      });
      await insertOrgMember(db, { org_id, user_id: id, role, created_at: timestamp() });
      await insertTeamMember(db, { team_id, user_id: id, role: 'member', created_at: timestamp() });
      const scoped = (scopes: ('read' | 'publish')[]) =>
        mintToken(db, { kind: 'pat', userId: id, name: role, scopes }).then((t) => t.token);
      return { id, username, token: await scoped(['read', 'publish']), readOnly: await scoped(['read']) };
    }
    const minter = await member('member', 'minter-password');
    const teammate = await member('member');
    const orgAdmin = await member('admin');
    const minterSession = (await login(server, minter.username, 'minter-password')).access_token;

    const { agent_id, thread_id } = await json<{ agent_id: string; thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: `revoke ${newId()}` }) },
      }),
      201,
    );
    const other = await json<{ agent_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ instructions: `other ${newId()}` }) },
      }),
      201,
    );
    const mintKey = async (agentId: string, token: string) =>
      json<{ id: string; key: string }>(
        await cli('POST', `/agents/${agentId}/keys`, { body: {}, token }),
        201,
      );
    const keys = await Promise.all(Array.from({ length: 6 }, () => mintKey(agent_id, minter.token)));
    const otherAgentKey = await mintKey(other.agent_id, minter.token);
    const threadToken = (
      await mintToken(db, {
        kind: 'thread',
        userId: admin.id,
        name: 'sandbox',
        scopes: ['read', 'publish', 'code:execute', 'messages:write_roles'],
        threadId: thread_id,
      })
    ).token;
    const revoke = async (keyId: string, token: string) => {
      const response = await cli('DELETE', `/keys/${keyId}`, { token });
      const text = await response.text();
      return {
        status: response.status,
        detail: text ? (JSON.parse(text) as { detail: unknown }).detail : undefined,
      };
    };
    const live = async () =>
      (await json<{ items: { id: string }[] }>(await cli('GET', `/agents/${agent_id}/keys`), 200)).items.map(
        (k) => k.id,
      );

    // Refused, and nothing revoked.
    expect(await revoke(keys[0]!.id, threadToken)).toEqual({
      status: 403,
      detail: {
        code: 'credential_scope_denied',
        message: 'a thread-bound credential cannot revoke agent keys',
      },
    });
    expect(await revoke(keys[0]!.id, teammate.token)).toEqual({
      status: 403,
      detail: {
        code: 'forbidden',
        message: 'only the user who minted this key, or an owner or admin of its organization, can revoke it',
      },
    });
    expect(await revoke(keys[0]!.id, otherAgentKey.key)).toEqual({ status: 404, detail: 'Key not found' });
    expect(await revoke(keys[0]!.id, minter.readOnly)).toEqual({
      status: 403,
      detail: 'PAT lacks required scope: publish',
    });
    expect((await live()).sort()).toEqual(keys.map((k) => k.id).sort());

    // Allowed: its minter (token or session), a key of its own agent, the organization's owner and admin.
    expect((await revoke(keys[0]!.id, minter.token)).status).toBe(204);
    expect((await revoke(keys[1]!.id, minterSession)).status).toBe(204);
    expect((await revoke(keys[2]!.id, keys[3]!.key)).status).toBe(204);
    expect((await revoke(keys[3]!.id, server.token)).status).toBe(204);
    expect((await revoke(keys[4]!.id, orgAdmin.token)).status).toBe(204);
    expect(await live()).toEqual([keys[5]!.id]);
  });

  it('serves the same router under /api/cli, and an unrouted path is a plain 404 Not Found', async () => {
    const viaApi = await json<{ items: unknown[] }>(
      await server.request('GET', '/api/cli/tokens', { token: session }),
      200,
    );
    const viaV2 = await json<{ items: unknown[] }>(await cli('GET', '/tokens', { token: session }), 200);
    expect(viaApi).toEqual(viaV2);
    const refused = await server.request('GET', '/api/cli/tokens');
    expect((await json<{ detail: { code: string } }>(refused, 403)).detail.code).toBe('jwt_required');
    expect((await json<{ detail: string }>(await cli('GET', '/no-such-route'), 404)).detail).toBe(
      'Not Found',
    );
  });
});

describe.each(testDatabases())('the login lockout behind a trusted proxy on $name', (database) => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startInjectedServer(database, { PADDOCK_TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(() => server.close());

  it('keys the lockout on the client the trusted proxy names, not on the proxy', async () => {
    const attempt = (password: string, client: string) =>
      server.paddock.app.inject({
        method: 'POST',
        url: '/v2/auth/login',
        payload: { username: 'admin', password },
        remoteAddress: '127.0.0.1',
        headers: { 'x-forwarded-for': client },
      });
    for (let i = 0; i < 10; i++) expect((await attempt(`wrong-${i}`, '203.0.113.7')).statusCode).toBe(401);
    expect((await attempt('test-password', '203.0.113.7')).statusCode).toBe(429);
    expect((await attempt('test-password', '203.0.113.8')).statusCode).toBe(200);
  });
});

describe.each(testDatabases())('sessions from an external OpenID Connect issuer on $name', (database) => {
  let issuer: OidcIssuer;
  let server: TestServer;

  beforeAll(async () => {
    // The issuer is a seam: a real HTTP server with a discovery document and keys, as any IdP serves.
    issuer = await startOidcIssuer({ audience: 'paddock-cli' });
    server = await startInjectedServer(database, {
      PADDOCK_OIDC_ISSUER: issuer.url,
      PADDOCK_OIDC_AUDIENCE: 'paddock-cli',
    });
  });
  afterAll(async () => {
    await server.close();
    await issuer.close();
  });
  const sign = (claims: Record<string, unknown>, audience?: string) => issuer.sign(claims, audience);

  it('accepts the issuer’s access token as a login session for a user it provisions once', async () => {
    const token = await sign({ sub: 'alice-at-idp', preferred_username: 'alice' });
    const minted = await json<PersonalToken>(
      await server.request('POST', '/v2/cli/tokens', { body: { scopes: 'read,publish' }, token }),
      201,
    );
    // Alice joined the deployment's default team: her personal token creates threads there.
    await json(
      await server.request('POST', '/v2/threads', { body: { agent: agentSpec() }, token: minted.token! }),
      201,
    );
    const again = await sign({ sub: 'alice-at-idp', preferred_username: 'alice' });
    const listed = await json<{ items: PersonalToken[] }>(
      await server.request('GET', '/v2/cli/tokens', { token: again }),
      200,
    );
    expect(listed.items.map((t) => t.id)).toEqual([minted.id]);
    const users = await server.paddock.services.store.db
      .selectFrom('users')
      .select(['username', 'subject'])
      .execute();
    expect(users.filter((u) => u.subject === 'alice-at-idp')).toEqual([
      { username: 'alice', subject: 'alice-at-idp' },
    ]);
  });

  it('refuses a token for another audience, or without a subject', async () => {
    for (const token of [await sign({ sub: 'bob' }, 'someone-else'), await sign({})]) {
      await json(await server.request('GET', '/v2/cli/tokens', { token }), 401);
    }
  });

  it('offers the issuer to browsers only with a client id for the web app, which needs the issuer', async () => {
    const providers = await server.request('GET', '/v2/auth/providers', { token: null });
    expect(await json(providers, 200)).toEqual({ password: true, oidc: null });
    expect(() => parseConfig({ PADDOCK_OIDC_CLIENT_ID: 'paddock-web' })).toThrow(
      new ConfigError('invalid PADDOCK_OIDC_CLIENT_ID: it needs PADDOCK_OIDC_ISSUER'),
    );
  });
});

async function login(server: TestServer, username: string, password: string) {
  return json<{ access_token: string; token_type: string; expires_at: string }>(
    await server.request('POST', '/v2/auth/login', { body: { username, password }, token: null }),
    200,
  );
}
