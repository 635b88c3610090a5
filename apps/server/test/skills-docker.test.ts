import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultSandboxImage } from '@paddock/sandbox';
import { testDatabases } from '@paddock/testing';
import { ensureTestImage, startTestDockerd, type TestDockerd } from '@paddock/testing/docker';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

/** Skills on sandbox_b: the same folders as on sandbox_a, bound read-only into the container. */
const dockerd = await startTestDockerd();
const unavailable = 'unavailable' in dockerd ? dockerd.unavailable : undefined;
if (unavailable) console.warn(`sandbox_b skills tests skipped: ${unavailable}`);

const configDir = mkdtempSync(join(tmpdir(), 'paddock-docker-config-'));
const config = join(configDir, 'paddock.yaml');
writeFileSync(config, 'providers:\n  sandbox_b: { enabled: true }\n');

describe.skipIf(unavailable !== undefined).each(testDatabases())(
  'skills on sandbox_b ($name)',
  (database) => {
    let server: TestServer | undefined;
    beforeAll(async () => {
      // The first run debootstraps (a minute or two); later runs import the cached tarball.
      await ensureTestImage((dockerd as TestDockerd).engine, defaultSandboxImage);
    }, 15 * 60_000);
    afterEach(async () => {
      await server?.close();
      server = undefined;
    });

    it('a turn reads the skill at $PADDOCK_SKILLS_DIR, and cannot write there', async () => {
      server = await startTestServer(database, {
        PADDOCK_CONFIG: config,
        DOCKER_HOST: (dockerd as TestDockerd).dockerHost,
      });
      await expect
        .poll(
          () =>
            server!.paddock.services.providers
              .capabilities()
              .providers.find((p) => p.machine_kind === 'sandbox_b')?.available,
          { timeout: 30_000 },
        )
        .toBe(true);
      const files = [
        { path: 'SKILL.md', content: '---\nname: greeter\ndescription: Greets.\n---\n' },
        { path: 'hello.txt', content: 'hello in a container\n' },
      ];
      await json(
        await server.request('PUT', '/v2/skills/default/greeter/versions/1.0.0', { body: { files } }),
        201,
      );
      const { thread_id } = await json<{ thread_id: string }>(
        await server.request('POST', '/v2/threads', {
          body: {
            agent: agentSpec({ machine_kind: 'sandbox_b', skills: [{ source: 'registry:default/greeter' }] }),
            input: '::sh cat $PADDOCK_SKILLS_DIR/greeter/hello.txt; touch /skills/greeter/x 2>&1 || true',
          },
        }),
        201,
      );
      await settled(server, thread_id, 120_000);
      const end = (await allEvents(server, thread_id)).find((e) => e.type === 'tool_call.end');
      expect(end?.data.output).toMatch(/^hello in a container\n.*Read-only file system/s);
    }, 180_000);
  },
);

afterAll(async () => {
  if (!unavailable) await (dockerd as TestDockerd).close();
});
