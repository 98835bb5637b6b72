import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { eventually } from '../helpers.js';
import { parseMail } from '../mail.js';
import { type Console, expectAccessible, expectNoOverflow, heading, signIn, SKIP_BROWSER, startConsole, stepsInOrder } from './harness.js';

// A visitor's newsletter sign-up confirmed in Chromium against the real service (see ./harness.ts): the website's
// form posted with its form token, the confirmation link followed from the mail in the outbox, the service's page
// saying so, accessible at desktop and phone widths; the link used again is refused.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };
const VISITOR = 'visitor.confirm@example.com';

if (SKIP_BROWSER) {
  console.warn('test/e2e/newsletter-confirm.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

describe.skipIf(SKIP_BROWSER)('newsletter confirmation in Chromium', { timeout: 180_000 }, () => {
  let app: Console;
  let page: Page;
  let base = '';
  let link = '';
  let subscriptionId = '';

  beforeAll(async () => {
    app = await startConsole(ADMIN, { FORM_TOKEN_MIN_SECONDS: '0' });
    ({ page, base } = app);
  }, 180_000);

  stepsInOrder(() => app);

  afterAll(async () => {
    expect(app?.serverErrors ?? []).toEqual([]);
    await app?.close();
  }, 180_000);

  async function api(method: 'GET' | 'POST', path: string, body?: object, headers: Record<string, string> = {}) {
    const res = await fetch(`${base}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: body && JSON.stringify(body) });
    expect(res.ok, `${method} ${path}: ${res.status}`).toBe(true);
    return res.json();
  }

  test('the website\'s form signs the visitor up, and the confirmation mail arrives', async () => {
    const { token } = await api('GET', '/api/public/form-token');
    const answer = await api('POST', '/api/public/newsletter', { email: VISITOR, name: 'Vic Visitor', form: 'footer', website: '', form_token: token });
    expect(answer).toEqual({ message: 'Thank you for subscribing' });
    const outbox = join(app.dataDir, 'outbox');
    const mail = await eventually(() => {
      if (!existsSync(outbox)) return undefined;
      return readdirSync(outbox).map((file) => parseMail(readFileSync(join(outbox, file), 'utf8'))).find((m) => m.to.includes(VISITOR));
    }, `the confirmation mail to ${VISITOR}`);
    expect(mail.subject).toBe('Confirm your newsletter subscription');
    const found = new RegExp(`${base.replace(/[.]/g, '\\.')}/api/public/newsletter/confirm\\?token=[A-Za-z0-9_-]+`).exec(mail.text);
    expect(found, 'the confirmation link in the mail').not.toBeNull();
    link = found![0];
  });

  test('following the link shows that the subscription is confirmed, accessible at 1200 and 375 px', async () => {
    await page.goto(link);
    await heading(page, 'Your subscription is confirmed').waitFor();
    await expect.poll(() => page.locator('main').innerText()).toContain(`${VISITOR} will receive our newsletter`);
    await expectAccessible(page, 'the confirmation page at 1200 px');
    await page.setViewportSize({ width: 375, height: 740 });
    await expectAccessible(page, 'the confirmation page at 375 px');
    await expectNoOverflow(page, 'the confirmation page at 375 px');
    await page.setViewportSize({ width: 1200, height: 760 });

    const { session } = await api('POST', '/api/auth/login', ADMIN);
    const list = await api('GET', '/api/crm/newsletters?status=subscribed', undefined, { authorization: `Bearer ${session.token}` });
    const subscription = list.data.find((s: { email: string }) => s.email === VISITOR);
    expect(subscription).toMatchObject({ name: 'Vic Visitor', consent: { form: 'footer', method: 'public-confirmed' } });
    subscriptionId = subscription.id;
  });

  test('the link followed again is refused with a page saying so', async () => {
    const res = await page.goto(link);
    expect(res?.status()).toBe(400);
    await heading(page, 'Link not valid').waitFor();
    await expect.poll(() => page.locator('main').innerText()).toContain('Sign up again to receive a new one');
    await expectAccessible(page, 'the refused link page at 1200 px');
    await page.setViewportSize({ width: 375, height: 740 });
    await expectAccessible(page, 'the refused link page at 375 px');
  });

  test('staff see the consent on the subscriber\'s page in the console', async () => {
    await page.setViewportSize({ width: 1200, height: 760 });
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
    await page.goto(`${base}/newsletters/${subscriptionId}/show`);
    await page.getByText('public-confirmed', { exact: true }).waitFor();
    await page.getByText('footer', { exact: true }).waitFor();
    await expectAccessible(page, 'the subscriber\'s page');
  });
});
