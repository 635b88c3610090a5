import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { mintToken } from '@paddock/core';
import { newId, timestamp } from '@paddock/protocol';
import {
  countRunningTurnsOfOrg,
  insertOrg,
  insertOrgMember,
  insertTeam,
  insertTeamMember,
  insertUser,
} from '@paddock/store';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeploymentConfig } from '../src/startup/deployment-config.ts';
import { agentSpec, json, settled } from './helpers.ts';

function configFile(text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'paddock-config-')), 'paddock.yaml');
  writeFileSync(path, text);
  return path;
}

describe('deployment config limits', () => {
  it('reads a default and per-organization running-turn limits, and refuses a limit below 1', () => {
    const limits = loadDeploymentConfig(
      configFile(
        'limits:\n  default: { running_turns: 10 }\n  organizations:\n    org-a: { running_turns: 2 }\n',
      ),
    ).limits;
    expect(limits).toEqual({
      default: { running_turns: 10 },
      organizations: { 'org-a': { running_turns: 2 } },
    });
    expect(() => loadDeploymentConfig(configFile('limits:\n  default: { running_turns: 0 }\n'))).toThrow(
      /limits\.default\.running_turns/,
    );
  });
});

describe.each(testDatabases())('running-turn limit of an organization on $name', (database) => {
  let server: TestServer;
  const limitedOrg = newId();
  let limitedToken: string;
  let ownOrg: string;
  beforeAll(async () => {
    server = await startTestServer(database, {
      PADDOCK_CONFIG: configFile(`limits:\n  organizations:\n    ${limitedOrg}: { running_turns: 2 }\n`),
    });
    limitedToken = await memberOf(server, limitedOrg);
    const orgs = await json<{ items: { id: string }[] }>(await server.request('GET', '/v2/cli/orgs'), 200);
    ownOrg = orgs.items[0]!.id;
  });
  afterAll(() => server.close());

  it('runs at most 2 turns of the organization at once; the others wait and all finish; another organization is not held back', async () => {
    const start = (token: string | undefined, i: number) =>
      server
        .request('POST', '/v2/threads', {
          body: { agent: agentSpec(), messages: [{ content: `::sleep 1000\nturn ${i}` }] },
          token,
        })
        .then((r) => json<{ thread_id: string; status: string }>(r, 201));
    const limited = await Promise.all([0, 1, 2, 3, 4].map((i) => start(limitedToken, i)));
    const other = await Promise.all([5, 6].map((i) => start(undefined, i)));
    // Over the limit a turn waits in the queue: the thread is accepted and shows as running.
    expect(limited.map((t) => t.status)).toEqual(Array(5).fill('running'));

    const { db } = server.paddock.services.store;
    // `otherAtLimit`: the other organization's running turns while the limited one is at its limit.
    const peak = { limited: 0, other: 0, otherAtLimit: 0 };
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const limitedNow = await countRunningTurnsOfOrg(db, limitedOrg);
        const otherNow = await countRunningTurnsOfOrg(db, ownOrg);
        peak.limited = Math.max(peak.limited, limitedNow);
        peak.other = Math.max(peak.other, otherNow);
        if (limitedNow === 2) peak.otherAtLimit = Math.max(peak.otherAtLimit, otherNow);
        await sleep(10);
      }
    })();
    const asMember = {
      request: (method: string, path: string) => server.request(method, path, { token: limitedToken }),
    };
    let finished: { status: string }[];
    try {
      const otherDone = Promise.all(other.map((t) => settled(server, t.thread_id, 30_000)));
      const limitedDone = Promise.all(limited.map((t) => settled(asMember, t.thread_id, 60_000)));
      await otherDone;
      finished = await limitedDone;
    } finally {
      sampling = false;
      await sampler;
    }

    expect(finished.map((t) => t.status)).toEqual(Array(5).fill('idle'));
    expect(peak.limited).toBe(2);
    // The other organization's two turns ran together, and ran while the limited one was at its
    // limit (when they end depends on the machine's speed; that they were not held back does not).
    expect(peak.other).toBe(2);
    expect(peak.otherAtLimit).toBeGreaterThan(0);
  }, 90_000);
});

/** A user of the organization `orgId` (created here, with a team) and a `read,publish` token. */
async function memberOf(server: TestServer, orgId: string): Promise<string> {
  const { db } = server.paddock.services.store;
  const at = timestamp();
  const userId = newId();
  const teamId = newId();
  await insertUser(db, {
    id: userId,
    username: `member-${userId}`,
    password_hash: null,
    issuer: null,
    subject: null,
    created_at: at,
  });
  await insertOrg(db, { id: orgId, name: `limited-${orgId}`, created_at: at });
  await insertOrgMember(db, { org_id: orgId, user_id: userId, role: 'owner', created_at: at });
  await insertTeam(db, { id: teamId, org_id: orgId, name: 'limited', created_at: at });
  await insertTeamMember(db, { team_id: teamId, user_id: userId, role: 'owner', created_at: at });
  const { token } = await mintToken(db, {
    kind: 'pat',
    userId,
    name: 'limited',
    scopes: ['read', 'publish'],
  });
  return token;
}
