import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installedMarker, installKey } from '@paddock/harness';
import { testDatabases } from '@paddock/testing';
import { startInjectedServer, startTestServer, type TestServer } from '@paddock/testing/server';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { loadDeploymentConfig } from '../src/startup/deployment-config.ts';
import { agentSpec, allEvents, json, settled } from './helpers.ts';

interface Listing {
  harness: string;
  program: string;
  version: string;
  kind: 'builtin' | 'acp';
  installed: boolean;
  dialect: string | null;
  abilities: { steering: boolean; resume: string; cancel: boolean };
}

const temp = mkdtempSync(join(tmpdir(), 'paddock-harnesses-'));
afterAll(() => rmSync(temp, { recursive: true, force: true }));

function file(name: string, content: string): string {
  const path = join(temp, name);
  writeFileSync(path, content);
  return path;
}

/** Pi remapped to another ACP program (bring your own harness). */
const remap = [
  'harnesses:',
  '  coding_eta:',
  '    program: My Agent',
  '    version: 2.0.0',
  '    packages: { my-agent: 2.0.0 }',
  '    command: [my-agent, --acp]',
  '    dialect: anthropic',
  '    token_env: MY_AGENT_KEY',
  '',
].join('\n');

describe.each(testDatabases())('GET /v2/harnesses on $name', (database) => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('lists the eight values, with the deployment’s remap and what this node’s cache holds', async () => {
    const cache = mkdtempSync(join(temp, 'cache-'));
    // A complete install of the remapped program is in the cache; nothing else is.
    const installed = join(cache, installKey({ packages: { 'my-agent': '2.0.0' } }));
    mkdirSync(installed);
    writeFileSync(join(installed, installedMarker), '{}\n');
    server = await startInjectedServer(database, {
      PADDOCK_CONFIG: file('remap.yaml', remap),
      PADDOCK_HARNESS_CACHE: cache,
    });
    const { items } = await json<{ items: Listing[] }>(await server.request('GET', '/v2/harnesses'), 200);
    expect(items.map((item) => item.harness)).toEqual([
      'coding_alpha',
      'knowledge_cloud',
      'coding_beta',
      'coding_gamma',
      'coding_delta',
      'coding_epsilon',
      'coding_zeta',
      'coding_eta',
    ]);
    const builtin = { kind: 'builtin', installed: true, dialect: null };
    expect(items[0]).toMatchObject({
      ...builtin,
      abilities: { steering: true, resume: 'native', cancel: true },
    });
    expect(items[1]).toMatchObject(builtin);
    const of = (harness: string) => items.find((item) => item.harness === harness)!;
    expect(of('coding_beta')).toEqual({
      harness: 'coding_beta',
      program: 'Claude Code',
      version: '0.23.1',
      kind: 'acp',
      installed: false,
      dialect: 'anthropic',
      abilities: { steering: false, resume: 'native', cancel: true },
    });
    // Gemini CLI's sessions do not survive a new process: the transcript resumes it.
    expect(of('coding_delta').abilities.resume).toBe('transcript');
    expect(of('coding_eta')).toMatchObject({
      program: 'My Agent',
      version: '2.0.0',
      kind: 'acp',
      installed: true,
      dialect: 'anthropic',
    });
  });

  it('answers any authenticated caller, and no anonymous one', async () => {
    server = await startInjectedServer(database, {
      PADDOCK_HARNESS_CACHE: mkdtempSync(join(temp, 'cache-')),
    });
    await json(await server.request('GET', '/v2/harnesses', { token: null }), 401);
  });
});

/** Two values remapped to a tiny real package: one that installs, one whose version does not exist. */
const tiny = (value: string, version: string) =>
  [
    `  ${value}:`,
    '    program: is-number',
    `    version: ${version}`,
    `    packages: { is-number: ${version} }`,
    '    command: [is-number]',
    '    dialect: openai-chat',
    '    token_env: PADDOCK_GATEWAY_TOKEN',
  ].join('\n');

describe.each(testDatabases())('a turn on an ACP harness on $name', (database) => {
  let server: TestServer;
  afterAll(() => server?.close());

  async function turnEvents(harness: string) {
    const { thread_id } = await json<{ thread_id: string }>(
      await server.request('POST', '/v2/threads', {
        body: { agent: agentSpec({ harness }), input: 'hello' },
      }),
      201,
    );
    await settled(server, thread_id, 60_000);
    return allEvents(server, thread_id);
  }

  it('installs the program first, with its progress on the thread, or fails with harness_unavailable', async () => {
    const config = ['harnesses:', tiny('coding_eta', '7.0.0'), tiny('coding_zeta', '999.0.0'), ''].join('\n');
    server = await startTestServer(database, {
      PADDOCK_CONFIG: file('tiny.yaml', config),
      // A cache of this test's own, so the install happens in this run.
      PADDOCK_HARNESS_CACHE: mkdtempSync(join(temp, 'cache-')),
    });
    const about = { harness: 'coding_eta', program: 'is-number', version: '7.0.0' };
    const installed = (await turnEvents('coding_eta')).filter((event) => event.type === 'harness.install');
    expect(installed[0]?.data).toEqual({
      ...about,
      status: 'installing',
      detail: 'installing is-number@7.0.0',
    });
    expect(installed.at(-1)?.data).toMatchObject({ ...about, status: 'installed' });
    const listed = await json<{ items: Listing[] }>(await server.request('GET', '/v2/harnesses'), 200);
    expect(listed.items.find((item) => item.harness === 'coding_eta')?.installed).toBe(true);

    const failed = await turnEvents('coding_zeta');
    // Progress lines come at most once a second: as many as the install takes, then the failure.
    const statuses = failed
      .filter((event) => event.type === 'harness.install')
      .map((event) => event.data.status);
    expect(statuses.at(-1)).toBe('failed');
    expect(new Set(statuses.slice(0, -1))).toEqual(new Set(['installing']));
    const error = failed.find((event) => event.type === 'error');
    expect(error?.data).toMatchObject({ code: 'harness_unavailable', retryable: false });
    expect(String(error?.data.message)).toMatch(/is-number@999\.0\.0 failed: ETARGET/);
    expect(failed.some((event) => event.type === 'tool_call.start')).toBe(false);
  }, 120_000);
});

describe('the deployment config’s harnesses', () => {
  it('takes a profile for an ACP value and refuses a remap of a built-in one or an invalid profile', () => {
    expect(loadDeploymentConfig(file('ok.yaml', remap)).harnesses.coding_eta?.command).toEqual([
      'my-agent',
      '--acp',
    ]);
    const builtin = remap.replace('coding_eta', 'coding_alpha');
    expect(() => loadDeploymentConfig(file('builtin.yaml', builtin))).toThrow(/harnesses/);
    const loose = remap.replace('2.0.0 }', '^2.0.0 }');
    expect(() => loadDeploymentConfig(file('loose.yaml', loose))).toThrow(
      /harnesses\.coding_eta\.packages\.my-agent: an exact version/,
    );
  });
});
