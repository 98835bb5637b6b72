import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { idpIssuer, startIdp } from '../sso-idp.js';
import { choose, type Console, expectAccessible, expectNoOverflow, field, heading, menuItem, quiet, SKIP_BROWSER, startConsole, stepsInOrder } from './harness.js';

// Single sign-on in the staff console, in Chromium against the real service and a real OpenID provider (oidc-provider
// with its development login and consent pages): the sign-in page offers *Sign in with <name>* (axe at 1200 and
// 375 px), a person the service knows signs in at the provider and lands signed in the console, one it does not know
// comes back to the sign-in page with the reason; the SSO providers screen lists the one set by environment and the
// user form has the *Require single sign-on* switch.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };
const PROVIDER_NAME = 'Company Login';

if (SKIP_BROWSER) {
  console.warn('test/e2e/sso.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

describe.skipIf(SKIP_BROWSER)('single sign-on in Chromium', { timeout: 180_000 }, () => {
  let app: Console;
  let page: Page;
  let base = '';
  let idp: { close: () => Promise<void> } | undefined;

  beforeAll(async () => {
    const issuer = await idpIssuer();
    app = await startConsole(ADMIN, { SSO_OIDC_ISSUER: issuer, SSO_OIDC_CLIENT_ID: 'pms-console', SSO_OIDC_CLIENT_SECRET: 'console-secret-0123456789', SSO_OIDC_NAME: PROVIDER_NAME });
    ({ page, base } = app);
    // The provider knows the service's callback, which exists once the service has its port.
    idp = await startIdp(issuer, [{ client_id: 'pms-console', client_secret: 'console-secret-0123456789', redirect_uris: [`${base}/api/auth/sso/oidc/callback`] }], {
      admin: { email: ADMIN.email, email_verified: true, name: 'Administrator' },
      stranger: { email: 'stranger@example.com', email_verified: true, name: 'Stranger' },
    });
  }, 180_000);

  afterAll(async () => {
    await app?.close();
    await idp?.close();
  }, 180_000);

  stepsInOrder(() => app);

  const ssoButton = () => page.getByRole('link', { name: `Sign in with ${PROVIDER_NAME}` });

  /** At the provider's own pages: its login form (any login names an account), then its consent. */
  async function signInAtProvider(login: string) {
    await page.locator('input[name="login"]').fill(login);
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
  }

  test('the sign-in page offers Sign in with <name>, accessible at 1200 and 375 px', async () => {
    await page.goto(`${base}/login`);
    await ssoButton().waitFor();
    await expectAccessible(page, 'sign-in with single sign-on');
    await page.setViewportSize({ width: 375, height: 740 });
    await page.reload();
    await ssoButton().waitFor();
    await quiet(page);
    await expectNoOverflow(page, 'sign-in at 375 px');
    await expectAccessible(page, 'sign-in with single sign-on at 375 px');
    await page.setViewportSize({ width: 1200, height: 760 });
  });

  test('someone the service does not know comes back to the sign-in page with the reason', async () => {
    await page.goto(`${base}/login`);
    await ssoButton().click();
    await page.waitForURL((url) => !url.href.startsWith(base));
    await signInAtProvider('stranger');
    await page.waitForURL((url) => url.href.startsWith(`${base}/login`));
    await page.getByRole('alert').filter({ hasText: 'There is no active account for you here' }).waitFor();
    await expectAccessible(page, 'sign-in showing an SSO refusal');
  });

  test('click Sign in with <name>, sign in at the provider, land signed in the console', async () => {
    // The provider remembers the stranger: a new browser session (its cookies and the service's share the host).
    await page.context().clearCookies();
    await ssoButton().click();
    await page.waitForURL((url) => !url.href.startsWith(base));
    await signInAtProvider('admin');
    await heading(page, 'Dashboard').waitFor();
    const session = await page.request.get(`${base}/api/auth/session`);
    expect(session.status()).toBe(200);
    expect((await session.json()).user.email).toBe(ADMIN.email);
  });

  test('SSO providers: the one set by environment read-only, a new one made on the screen; the user form has Require single sign-on', async () => {
    await menuItem(page, 'SSO providers').click();
    await heading(page, /^SSO providers$/).waitFor();
    await page.getByText(PROVIDER_NAME).first().click();
    await page.getByText(`${base}/api/auth/sso/oidc/callback`).waitFor();
    await expect.poll(() => page.getByRole('link', { name: 'Edit' }).count()).toBe(0);
    // A provider added on the screen: the secret written once and never shown, permissions for the users it provisions.
    await menuItem(page, 'SSO providers').click();
    await heading(page, /^SSO providers$/).waitFor();
    await page.getByRole('link', { name: 'Create' }).click();
    await field(page, 'Name').waitFor();
    await expectAccessible(page, 'a new SSO provider');
    await field(page, 'Name').fill('Okta');
    await field(page, 'Issuer URL').fill('https://example.okta.com');
    await field(page, 'Client ID').fill('okta-client');
    await field(page, 'Client secret').fill('okta-secret-never-shown');
    await field(page, 'Provision users').check();
    await page.getByRole('button', { name: 'Add' }).click();
    await choose(page, 'Module', 'crm');
    await field(page, 'Read').check();
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(async () => {
      const listed = await (await page.request.get(`${base}/api/iam/sso-providers`)).json();
      return listed.data.find((p: { name: string }) => p.name === 'Okta') ?? null;
    }).toMatchObject({ issuer: 'https://example.okta.com', client_id: 'okta-client', jit: true, jit_grants: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    await expect.poll(() => page.getByText('okta-secret-never-shown').count()).toBe(0);

    await menuItem(page, 'Users').click();
    await heading(page, /^Users$/).waitFor();
    await page.getByRole('link', { name: 'Create' }).click();
    await field(page, 'Require single sign-on').waitFor();
  });
});
