import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { testDatabases } from '@paddock/testing';
import { type OidcIssuer, startOidcIssuer } from '@paddock/testing/oidc-issuer';
import { startTestServer, type TestServer } from '@paddock/testing/server';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const axeScript = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const artifacts = resolve(import.meta.dirname, '../../../test-artifacts/web');

describe.each(testDatabases().slice(0, 1))(
  'the web app signs in through an OpenID Connect issuer on $name',
  (database) => {
    let issuer: OidcIssuer;
    let server: TestServer;
    let browser: Browser;
    let page: Page;

    beforeAll(async () => {
      mkdirSync(artifacts, { recursive: true });
      issuer = await startOidcIssuer({
        audience: 'paddock',
        user: { sub: 'carol-at-idp', preferred_username: 'carol' },
      });
      server = await startTestServer(database, {
        PADDOCK_OIDC_ISSUER: issuer.url,
        PADDOCK_OIDC_AUDIENCE: 'paddock',
        PADDOCK_OIDC_CLIENT_ID: 'paddock-web',
        PADDOCK_STANDBY_SANDBOXES: '0',
      });
      browser = await chromium.launch({
        executablePath: '/usr/bin/chromium',
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
      });
      page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    });
    afterAll(async () => {
      await browser?.close();
      await server?.close();
      await issuer?.close();
    });

    it('offers the issuer beside the built-in login, with no accessibility violation', async () => {
      const providers = await (await fetch(`${server.url}/v2/auth/providers`)).json();
      expect(providers).toEqual({
        password: true,
        oidc: { issuer: issuer.url, client_id: 'paddock-web', scope: 'openid profile email' },
      });
      await page.goto(`${server.url}/usage`);
      await page.waitForURL(/\/sign-in\?next=/);
      await page.getByRole('button', { name: `Sign in with ${new URL(issuer.url).host}` }).waitFor();
      await page.addScriptTag({ path: axeScript });
      const violations = await page.evaluate(async () => {
        const { axe } = window as unknown as { axe: { run(): Promise<{ violations: { id: string }[] }> } };
        return (await axe.run()).violations.map((v) => v.id);
      });
      expect(violations).toEqual([]);
      await page.screenshot({ path: join(artifacts, 'sign-in-oidc.png'), fullPage: true });
    });

    it('says so when the issuer refuses, and signs in as the issuer’s user when it agrees', async () => {
      issuer.refuseNext();
      await page.getByRole('button', { name: /^Sign in with / }).click();
      await page.waitForURL(/\/sign-in\/callback/);
      await expect
        .poll(() => page.getByRole('alert').textContent())
        .toMatch(/refused the sign-in: the user declined/);

      await page.goto(`${server.url}/sign-in?next=/usage`);
      await page.getByRole('button', { name: /^Sign in with / }).click();
      // Back where the sign-in began, signed in: the page reads the control plane with the issuer's token.
      await page.waitForURL(`${server.url}/usage`);
      await page.getByRole('heading', { name: 'Usage' }).waitFor();
      // The heading shows before the page's first request with the token has made the user.
      const users = () =>
        server.paddock.services.store.db
          .selectFrom('users')
          .select(['username', 'issuer'])
          .where('subject', '=', 'carol-at-idp')
          .execute();
      await expect.poll(users).toEqual([{ username: 'carol', issuer: issuer.url }]);
      // The code was good once: going back to the callback address does not sign in again.
      await page.goto(`${server.url}/sign-in/callback?code=replayed&state=x`);
      await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/not started in this tab/);
    });
  },
);
