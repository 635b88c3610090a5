import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Debian's Chromium (the README's set-up installs it); the suite says so rather than passing without it. */
const executablePath = '/usr/bin/chromium';
const axeScript = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
/** Screenshots of every page, kept after the run (gitignored). */
const artifacts = resolve(import.meta.dirname, '../../../test-artifacts/web');

describe.each(testDatabases().slice(0, 1))('the web app in a real browser on $name', (database) => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  /** The thread the API made, which the later tests come back to. */
  let firstThread = '';
  /** Every response body the page received. */
  const received: string[] = [];

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    server = await startTestServer(database);
    browser = await chromium.launch({
      executablePath,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('response', (response) => {
      void response.text().then(
        (body) => received.push(body),
        () => {},
      );
    });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  /** A screenshot of the page as it stands, after axe found nothing to say about it. */
  const shot = async (name: string) => {
    await page.addScriptTag({ path: axeScript });
    const violations = await page.evaluate(async () => {
      const { axe } = window as unknown as {
        axe: { run(): Promise<{ violations: { id: string; help: string }[] }> };
      };
      return (await axe.run()).violations.map((v) => `${v.id}: ${v.help}`);
    });
    expect(violations, `axe on ${name}`).toEqual([]);
    await page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });
  };
  const createThread = async (input: string) =>
    (
      (await (
        await server.request('POST', '/v2/threads', { body: { agent: { instructions: 'web test' }, input } })
      ).json()) as {
        thread_id: string;
      }
    ).thread_id;

  it('signs in with the built-in login; a wrong password is said, not thrown', async () => {
    await page.goto(server.url);
    await page.waitForURL(/\/sign-in/);
    await page.getByLabel('User name').fill('admin');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/.+/);
    await shot('sign-in-refused');
    await page.getByLabel('Password').fill('test-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Threads' }).waitFor();
    await shot('threads-empty');
  });

  it('shows a thread created over the API without a reload, and its transcript live', async () => {
    const threadId = await createThread('::sh echo from-the-api');
    firstThread = threadId;
    const row = page.locator(`tr[data-thread-id="${threadId}"]`);
    await row.waitFor({ timeout: 10_000 });
    await shot('threads');
    await row.getByRole('link').click();
    await page.waitForURL(new RegExp(`/threads/${threadId}`));
    const transcript = page.getByRole('list', { name: 'Transcript' });
    await transcript.getByText('from-the-api', { exact: false }).first().waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.getByTestId('thread-status').textContent(), { timeout: 30_000 })
      .toBe('idle');
    await shot('thread');
  });

  it('sends a follow-up typed in the page, whose reply streams in; Stop settles a long turn', async () => {
    await page.getByLabel('Follow-up').fill('hello from the page');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByText('You said: hello from the page').waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.getByTestId('thread-status').textContent(), { timeout: 30_000 })
      .toBe('idle');

    await page.getByLabel('Follow-up').fill('::sleep 60000');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect
      .poll(() => page.getByTestId('thread-status').textContent(), { timeout: 30_000 })
      .toBe('running');
    await shot('thread-running');
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.getByText('turn ended: cancelled').waitFor({ timeout: 30_000 });
    await expect
      .poll(() => page.getByTestId('thread-status').textContent(), { timeout: 30_000 })
      .toBe('idle');
    await shot('thread-stopped');
  });

  it('resumes the stream after the connection drops, without a gap or a repeat', async () => {
    const youBefore = await page.locator('.message.user').count();
    const streams: (string | undefined)[] = [];
    const onRequest = (request: { url(): string; headers(): Record<string, string> }) => {
      if (request.url().includes('/events/stream')) streams.push(request.headers()['last-event-id']);
    };
    page.on('request', onRequest);
    // The server drops every open connection (the page's event stream among them) and goes on; the
    // page is offline for a moment, so what the input below produces happens while it is away.
    await page.context().setOffline(true);
    server.paddock.app.server.closeAllConnections();
    const sent = await server.request('POST', `/v2/tasks/${firstThread}/inputs`, {
      body: { input_id: randomUUID(), messages: [{ content: 'sent while you were away' }] },
    });
    expect(sent.status).toBe(201);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await page.context().setOffline(false);
    await page.getByText('You said: sent while you were away').waitFor({ timeout: 30_000 });
    expect(await page.locator('.message.user').count()).toBe(youBefore + 1);
    expect(await page.getByText('You said: sent while you were away').count()).toBe(1);
    page.off('request', onRequest);
    // The stream was opened again, from the last event the page had.
    expect(streams.length).toBeGreaterThan(0);
    expect(Number(streams.at(-1))).toBeGreaterThan(0);
    // The page holds exactly the transcript the service stores.
    const { items } = (await (await server.request('GET', `/v2/threads/${firstThread}/messages`)).json()) as {
      items: { role: string }[];
    };
    expect(await page.locator('.message.user').count()).toBe(items.filter((m) => m.role === 'user').length);
  });

  it('uploads a file that appears in the tree, previews it, and downloads it intact', async () => {
    const text = 'hello from an uploaded file\n';
    await page.locator('input[type=file]').setInputFiles({
      name: 'notes.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from(text),
    });
    await page.getByRole('button', { name: 'notes.txt' }).waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('file-text').textContent(), { timeout: 10_000 }).toBe(text);
    const binary = randomBytes(3 * 1024 * 1024 + 17);
    await page.locator('input[type=file]').setInputFiles({
      name: 'data.bin',
      mimeType: 'application/octet-stream',
      buffer: binary,
    });
    await page.getByRole('button', { name: 'data.bin' }).waitFor({ timeout: 60_000 });
    await page.getByText('No preview: 3145745 bytes, not text.').waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('data.bin');
    expect((await readFile((await download.path())!)).equals(binary)).toBe(true);
    // A file the agent writes appears once its turn ends.
    await page.getByLabel('Follow-up').fill('::sh echo made > made-by-agent.txt');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('button', { name: 'made-by-agent.txt' }).waitFor({ timeout: 30_000 });
    await shot('thread-files');
    await page.emulateMedia({ colorScheme: 'dark' });
    await shot('thread-files-dark');
    await page.emulateMedia({ colorScheme: 'light' });
  });

  it("shows the thread's agent, whose secret is set and replaced and never displayed", async () => {
    await page.getByRole('link', { name: 'Agent', exact: true }).click();
    await page.getByRole('heading', { name: 'Secrets' }).waitFor();
    const agentId = page.url().split('/agents/')[1]!;
    await page.getByLabel('Secret name').fill('API_KEY');
    await page.getByLabel('Secret value').fill('first-secret-value');
    await page.getByRole('button', { name: 'Add secret' }).click();
    await page.getByText('API_KEY saved').waitFor();
    await page.getByRole('button', { name: 'Replace API_KEY' }).click();
    await page.getByLabel('New value for API_KEY').fill('second-secret-value');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('API_KEY saved').waitFor();
    const { secrets } = (await (await server.request('GET', `/v2/cli/agents/${agentId}/secrets`)).json()) as {
      secrets: Record<string, string>;
    };
    expect(secrets).toEqual({ API_KEY: 'second-secret-value' });
    // Neither value is on the page, in its markup, or in anything it fetched.
    const html = await page.content();
    expect(html).not.toMatch(/first-secret-value|second-secret-value/);
    expect(received.filter((body) => /first-secret-value|second-secret-value/.test(body))).toEqual([]);
    await shot('agent');
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.locator(`a[href="/agents/${agentId}"]`).waitFor();
    await shot('agents');
  });

  it('mints an agent key shown once, and revokes it', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await page.locator('a[href^="/agents/"]').first().click();
    await page.getByRole('heading', { name: 'Keys' }).waitFor();
    await page.getByLabel('Key name').fill('ci-key');
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('minted-key').textContent())!;
    expect(key).toMatch(/^pdk_/);
    const use = () => server.request('GET', '/v2/threads?limit=1', { token: key });
    expect((await use()).status).toBe(200);
    await page.getByRole('button', { name: 'Done' }).click();
    await expect.poll(() => page.getByTestId('minted-key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
    await shot('agent-keys');
    await page.getByRole('button', { name: 'Revoke ci-key' }).click();
    await page.getByText('No keys.').waitFor();
    expect((await use()).status).toBe(401);
  });

  it("runs an agent's evals against its thread and shows the verdicts", async () => {
    const agentId = page.url().split('/agents/')[1]!;
    const manifest = `/v2/cli/agents/${agentId}/manifest`;
    const { components } = (await (await server.request('GET', manifest)).json()) as { components: object[] };
    const evalOf = (name: string, criteria: string) => ({
      type: 'eval',
      name,
      files: [{ path: 'criteria.md', content: criteria }],
    });
    const published = await server.request('PUT', manifest, {
      body: {
        components: [
          ...components,
          evalOf('mentions-the-api', '::expect from-the-api'),
          evalOf('says-goodbye', '::expect goodbye'),
        ],
      },
    });
    expect(published.status).toBe(200);
    await page.reload();
    await page.getByText('mentions-the-api').first().waitFor();
    // The manifest's components, each with its files.
    const shown = page.getByRole('region', { name: 'Manifest' });
    await expect
      .poll(() => shown.getByRole('row', { name: /says-goodbye/ }).textContent())
      .toMatch(/says-goodbye.*eval.*criteria\.md/);
    await page.getByLabel('Thread to judge').fill(firstThread);
    await page.getByRole('button', { name: 'Run the evals' }).click();
    const evals = page.getByRole('region', { name: 'Evals' });
    const row = (name: string) => evals.getByRole('row', { name: new RegExp(name) });
    await expect.poll(() => row('mentions-the-api').textContent(), { timeout: 30_000 }).toContain('pass');
    await expect.poll(() => row('says-goodbye').textContent(), { timeout: 30_000 }).toContain('fail');
    await shot('agent-evals');
  });

  it("adds and removes an agent's schedule; a bad cron is said", async () => {
    await page.getByLabel('Cron').fill('every day');
    await page.getByLabel('Input', { exact: true }).fill('good morning');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toMatch(/.+/);
    await page.getByLabel('Cron').fill('0 9 * * 1-5');
    await page.getByLabel('Time zone').fill('Europe/Paris');
    await page.getByLabel('Input', { exact: true }).fill('good morning');
    await page.getByRole('button', { name: 'Add schedule' }).click();
    await page.getByRole('button', { name: 'Remove schedule-1' }).waitFor();
    await shot('agent-schedules');
    await page.getByRole('button', { name: 'Remove schedule-1' }).click();
    await page.getByText('No schedules.').waitFor();
  });

  it("connects an agent's chat, rotates its credentials without showing them, and disconnects it", async () => {
    const agentId = page.url().split('/agents/')[1]!;
    const chat = page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Chat' }) });
    await chat.getByText('Not connected').waitFor();
    await chat.getByLabel('Bot token').fill('xoxb-first-bot-token');
    await chat.getByLabel('Signing secret').fill('first-signing-secret');
    await chat.getByLabel('App name (optional)').fill('Helper Bot');
    await chat.getByRole('button', { name: 'Connect chat' }).click();
    await chat.getByText(/^Connected as Helper Bot, since/).waitFor();
    await chat.getByLabel('Bot token').fill('xoxb-second-bot-token');
    await chat.getByLabel('Signing secret').fill('second-signing-secret');
    await chat.getByRole('button', { name: 'Rotate chat credentials' }).click();
    await expect.poll(() => chat.getByLabel('Bot token').inputValue()).toBe('');
    // The app's name was kept: the form starts from what identifies the install.
    await chat.getByText(/^Connected as Helper Bot, since/).waitFor();
    const stored = await server.paddock.services.store.db
      .selectFrom('agent_integrations')
      .select('config_sealed')
      .where('agent_id', '=', agentId)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(server.paddock.services.secrets.open(stored.config_sealed))).toMatchObject({
      bot_token: 'xoxb-second-bot-token',
      signing_secret: 'second-signing-secret',
    });
    const secrets = /xoxb-|signing-secret/;
    expect(await page.content()).not.toMatch(secrets);
    expect(received.filter((body) => secrets.test(body))).toEqual([]);
    await shot('agent-connections');
    await chat.getByRole('button', { name: 'Disconnect chat' }).click();
    await chat.getByText('Not connected').waitFor();
  });

  it('mints a personal token shown once, lists it by prefix, and revokes it', async () => {
    await page.getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('heading', { name: 'Personal access tokens' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('laptop');
    await page.getByLabel('publish').check();
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = (await page.getByTestId('minted-token').textContent())!;
    expect(token).toMatch(/^pdk_pat_/);
    const use = () => server.request('GET', '/v2/threads?limit=1', { token });
    expect((await use()).status).toBe(200);
    const row = page.getByRole('row', { name: /laptop/ });
    await expect.poll(() => row.textContent()).toContain('read, publish');
    await shot('tokens');
    await page.getByRole('button', { name: 'Revoke laptop' }).click();
    await expect.poll(() => row.count()).toBe(0);
    expect((await use()).status).toBe(401);
  });

  it('adds a team, and draws an orchestration as a graph of its members and edges', async () => {
    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByRole('heading', { name: 'Organizations and teams' }).waitFor();
    await page.getByLabel(/New team in/).fill('web-team');
    await page.getByRole('button', { name: 'Add team' }).click();
    await page.getByRole('listitem').filter({ hasText: 'web-team' }).waitFor();
    await shot('teams');

    const thread = (await (await server.request('GET', `/v2/threads/${firstThread}`)).json()) as {
      agent_id: string;
    };
    const agent = (await (await server.request('GET', `/v2/agents/${thread.agent_id}`)).json()) as {
      team_id: string;
    };
    const reviewer = (
      (await (
        await server.request('POST', '/v2/threads', { body: { agent: { instructions: 'reviewer' } } })
      ).json()) as { agent_id: string }
    ).agent_id;
    const created = await server.request('POST', '/v2/cli/orchestrations', {
      body: {
        team_id: agent.team_id,
        name: 'review loop',
        members: [
          { agent_id: thread.agent_id, role: 'writer' },
          { agent_id: reviewer, role: 'reviewer' },
        ],
        edges: [{ from: thread.agent_id, to: reviewer }],
      },
    });
    expect(created.status).toBe(201);
    await page.getByRole('link', { name: 'Orchestrations' }).click();
    const graph = page.getByRole('img', { name: /2 members; edges: web test to reviewer/ });
    await graph.waitFor();
    expect(await graph.locator('line').count()).toBe(1);
    await shot('orchestrations');
  });

  it("charts the organization's model tokens, by agent and by thread", async () => {
    await page.getByRole('link', { name: 'Usage' }).click();
    await page.getByRole('heading', { name: 'Busiest threads' }).waitFor();
    const chart = page.getByRole('img', { name: /tokens over 30 days/ });
    const label = (await chart.getAttribute('aria-label'))!;
    expect(Number(label.split(' ')[0])).toBeGreaterThan(0);
    expect(await chart.locator('g').count()).toBe(30);
    await page.locator(`tr[data-usage-thread="${firstThread}"]`).waitFor();
    await shot('usage');
  });

  it('lists the harnesses and the sandbox providers', async () => {
    await page.getByRole('link', { name: 'Harnesses' }).click();
    await page.getByRole('cell', { name: 'coding_alpha' }).waitFor();
    await page.getByRole('cell', { name: 'sandbox_a' }).waitFor();
    await shot('system');
  });

  it('fits a phone-width screen, and the API keeps its own 404s', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const { agent_id: agentId } = (await (
      await server.request('GET', `/v2/threads/${firstThread}`)
    ).json()) as {
      agent_id: string;
    };
    for (const [name, path, heading] of [
      ['threads', '/', 'Threads'],
      ['thread', `/threads/${firstThread}`, 'Files'],
      ['agents', '/agents', 'Agents'],
      ['agent', `/agents/${agentId}`, 'Keys'],
      ['orchestrations', '/orchestrations', 'review loop'],
      ['teams', '/orgs', 'Organizations and teams'],
      ['system', '/system', 'Sandbox providers'],
      ['tokens', '/tokens', 'Personal access tokens'],
      ['usage', '/usage', 'Busiest threads'],
    ]) {
      await page.goto(`${server.url}${path}`);
      await page.getByRole('heading', { name: heading }).first().waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${path} scrolls sideways at 390 pixels`).toBeLessThanOrEqual(0);
      await shot(`${name}-390`);
    }
    const missing = await fetch(`${server.url}/v2/nothing-here`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ detail: 'Not Found' });
    const deep = await fetch(`${server.url}/threads/some-id`);
    expect(deep.headers.get('content-type')).toMatch(/text\/html/);
  });
});
