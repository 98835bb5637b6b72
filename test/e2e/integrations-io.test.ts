import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { chooseMany, type Console, expectAccessible, expectNoOverflow, field, heading, menuItem, openScreen, quiet, shot, signIn, SKIP_BROWSER, startConsole, stepsInOrder } from './harness.js';

// The staff console's integration screens in Chromium against the real service (see ./harness.ts): a CSV import of
// leads from the leads list (dry run, the job's progress, the imports list), and a webhook endpoint receiving a test
// event at a local receiver (the secret shown once, the delivery log, a failed delivery retried).

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };

if (SKIP_BROWSER) {
  console.warn('test/e2e/integrations-io.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

/** Three leads in the export's columns; line 4 (the header is line 1) has a bad e-mail address. */
const LEADS_CSV = [
  'first_name,last_name,email,phone,status,source,interest',
  'Grace,Hopper,grace.hopper@example.com,,new,website,Lot in Phase 2',
  'Alan,Turing,alan.turing@example.com,+63 917 555 0101,contacted,referral,',
  'Bad,Row,not-an-address,,new,event,',
  'Katherine,Johnson,katherine.johnson@example.com,,qualified,social,Townhouse',
].join('\n');

type Received = { headers: IncomingHttpHeaders; body: string };

describe.skipIf(SKIP_BROWSER)('staff console: imports and webhooks in Chromium', { timeout: 180_000 }, () => {
  let app: Console;
  let page: Page;
  let base = '';
  let receiver: Server;
  let receiverUrl = '';
  /** What the receiver answers: 204, or 503 while `failing`. */
  let failing = false;
  const received: Received[] = [];

  beforeAll(async () => {
    receiver = createServer((request, response) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body });
        response.writeHead(failing ? 503 : 204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks/pms`;
    // One retry a second after the first attempt, then a delivery fails: the test sees a failure without waiting hours.
    app = await startConsole(ADMIN, { WEBHOOK_RETRY_SCHEDULE: '1' });
    ({ page, base } = app);
    await app.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
  }, 180_000);

  // After a failed step the rest are skipped; the failure is told with a screenshot (./harness.ts).
  stepsInOrder(() => app);

  afterAll(async () => {
    await app?.close();
    // Without waiting for kept-alive connections to time out.
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  }, 180_000);

  test('Import CSV clicked while an empty list is still loading: the dialog stays open as the empty page replaces the toolbar', async () => {
    // The list's answer is held back until the toolbar's button has been clicked; then it comes, empty.
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const subscribersList = (url: URL) => url.pathname === '/api/crm/newsletters';
    await page.route(subscribersList, async (route) => {
      await held;
      await route.continue();
    });
    try {
      await openScreen(page, 'Subscribers');
      await page.getByRole('button', { name: 'Import CSV' }).click();
      release();
      await page.getByText('No Subscribers yet.').waitFor();
      const dialog = page.getByRole('dialog', { name: 'Import subscribers from CSV' });
      await dialog.getByText('columns of the subscribers export').waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
    } finally {
      release();
      await page.unroute(subscribersList);
    }
  });

  test('leads: Import CSV shows the dry run with the bad row, imports the rest with progress, the leads are listed', async () => {
    await openScreen(page, 'Leads');
    await page.getByRole('button', { name: 'Import CSV' }).click();
    const dialog = page.getByRole('dialog', { name: 'Import leads from CSV' });
    await dialog.getByText('columns of the leads export').waitFor();
    await expect.poll(() => dialog.getByRole('link', { name: 'Download the current export' }).getAttribute('href')).toBe('/api/crm/leads/export');
    await dialog.locator('input[type=file]').setInputFiles({ name: 'new-leads.csv', mimeType: 'text/csv', buffer: Buffer.from(LEADS_CSV) });

    // The dry run: totals, and the bad row by its line and field; nothing written yet.
    await dialog.getByText('4 rows in the file: 3 new records to create, 0 rows already known (skipped), 1 bad row.').waitFor();
    const bad = dialog.getByRole('table', { name: 'Bad rows of the file' }).getByRole('row').nth(1);
    await expect.poll(() => bad.getByRole('cell').allTextContents()).toEqual(['4', 'email', expect.stringMatching(/e-mail/)]);
    await expectAccessible(page, 'import dialog with its dry run');
    await shot(page, 'import-dry-run');
    const listed = await fetchJson(`/api/crm/leads?limit=1`);
    expect(listed.pagination.total).toBe(0);

    // The import: its page follows the job until it completes.
    await dialog.getByRole('button', { name: 'Import 3 rows' }).click();
    await page.waitForURL(/\/imports\/[^/]+\/show$/);
    await page.getByRole('status').filter({ hasText: 'Completed: 4 of 4 rows' }).waitFor();
    await expect.poll(() => page.getByRole('progressbar', { name: 'Import progress' }).getAttribute('aria-valuenow')).toBe('100');
    await page.getByText('Import completed: 3 created, 0 skipped, 1 failed.').waitFor();
    const refused = page.getByRole('table', { name: 'Refused rows' }).getByRole('row').nth(1);
    await expect.poll(() => refused.getByRole('cell').allTextContents()).toEqual(['4', 'email', expect.stringMatching(/e-mail/)]);
    await expectAccessible(page, 'import result');
    await shot(page, 'import-result');
    const importPath = new URL(page.url()).pathname;

    // The new leads in their list (read again, not from the cache of before the import).
    await page.getByRole('link', { name: 'Open leads' }).click();
    await page.waitForURL(/\/leads$/);
    await page.getByText('1-3 of 3').waitFor();
    for (const name of ['Hopper', 'Turing', 'Johnson']) await page.getByRole('cell', { name, exact: true }).waitFor();

    // The same file again: every row already known, nothing to import.
    await page.getByRole('button', { name: 'Import CSV' }).click();
    await dialog.locator('input[type=file]').setInputFiles({ name: 'new-leads.csv', mimeType: 'text/csv', buffer: Buffer.from(LEADS_CSV) });
    await dialog.getByText('4 rows in the file: 0 new records to create, 3 rows already known (skipped), 1 bad row.').waitFor();
    expect(await dialog.getByRole('button', { name: 'Nothing new to import' }).isDisabled()).toBe(true);
    await dialog.getByRole('button', { name: 'Cancel' }).click();

    // The imports screen (crm section) lists it with its counts and who; a row opens the same result.
    await menuItem(page, 'Imports').click();
    const row = page.getByRole('row').filter({ hasText: 'new-leads.csv' });
    await expect.poll(async () => (await row.getByRole('cell').allTextContents()).slice(1)).toEqual(['new-leads.csv', 'leads', 'completed', '4', '3', '0', '1', 'Administrator']);
    await expectAccessible(page, 'imports list');
    await shot(page, 'imports');
    await chooseMany(page, 'Status', ['failed', 'running']);
    await page.getByText('No Imports found using the current filters.').waitFor();
    await chooseMany(page, 'Status', ['completed']);
    await row.waitFor();
    await page.goto(`${base}/imports`);
    await row.getByRole('cell', { name: 'new-leads.csv' }).click();
    await page.waitForURL((url) => url.pathname === importPath);
    await page.getByText('Import completed: 3 created, 0 skipped, 1 failed.').waitFor();

    // 375 px wide: the list, the result and the dialog fit and pass axe.
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      for (const path of ['/imports', importPath]) {
        await page.goto(`${base}${path}`);
        await page.locator('#main-content').waitFor();
        await page.getByText('new-leads.csv').first().waitFor();
        await expectNoOverflow(page, `${path} at 375 px`);
        await expectAccessible(page, `${path} at 375 px`);
      }
      await page.goto(`${base}/leads`);
      await page.getByRole('button', { name: 'Import CSV' }).click();
      await dialog.locator('input[type=file]').setInputFiles({ name: 'new-leads.csv', mimeType: 'text/csv', buffer: Buffer.from(LEADS_CSV) });
      await dialog.getByText('1 bad row.', { exact: false }).waitFor();
      await expectAccessible(page, 'import dialog at 375 px');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
    } finally {
      await page.setViewportSize({ width: 1200, height: 760 });
    }
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  test('webhooks: an endpoint is created (secret shown once), a test event reaches the receiver, a failed delivery is retried', async () => {
    await menuItem(page, 'Webhooks').click();
    await page.waitForURL(/\/webhooks$/);
    await page.getByText('No Webhooks yet').waitFor();
    await page.getByRole('link', { name: 'Create' }).first().click();
    await page.waitForURL(/\/webhooks\/create$/);
    await field(page, 'URL').fill(receiverUrl);
    await field(page, 'Description').fill('Website CRM sync');
    const events = page.getByRole('combobox', { name: /^Events/ });
    await events.click();
    await events.fill('lead.created');
    await page.getByRole('option', { name: 'lead.created', exact: true }).click();
    await events.fill('inquiry.rec');
    await page.getByRole('option', { name: 'inquiry.received', exact: true }).click();
    await page.keyboard.press('Escape');
    await expectAccessible(page, 'webhook form');
    await page.getByRole('button', { name: 'Save' }).click();

    // The secret, once, with its copy button and the warning.
    const secretDialog = page.getByRole('dialog', { name: 'Signing secret' });
    await secretDialog.getByText('you will not see it again').waitFor();
    const secret = await secretDialog.getByLabel('Signing secret').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await secretDialog.getByRole('button', { name: 'Copy' }).click();
    await secretDialog.getByText(/Copied to the clipboard|the secret is selected/).waitFor();
    await expectAccessible(page, 'secret dialog');
    await shot(page, 'webhook-secret');
    await secretDialog.getByRole('button', { name: 'I have stored the secret' }).click();
    await page.waitForURL(/\/webhooks\/[^/]+\/show$/);
    await secretDialog.waitFor({ state: 'detached' });
    await heading(page, 'Delivery log').waitFor();
    await page.getByText('Website CRM sync', { exact: true }).waitFor();
    await page.getByText('lead.created, inquiry.received', { exact: true }).waitFor();
    expect(await page.content()).not.toContain(secret);
    await page.getByText(/No deliveries yet/).waitFor();

    // A test event: delivered to the receiver, signed with that secret (Standard Webhooks).
    await page.getByRole('button', { name: 'Send test event' }).click();
    const log = page.getByRole('table', { name: 'Delivery log' });
    const delivered = log.locator('tr[data-status="delivered"]').filter({ hasText: 'webhook.test' });
    await delivered.waitFor();
    await expect.poll(async () => (await delivered.getByRole('cell').allTextContents()).slice(0, 4)).toEqual(['webhook.test', 'delivered', '1', '204']);
    expect(received).toHaveLength(1);
    const [{ headers, body }] = received;
    expect(JSON.parse(body)).toMatchObject({ type: 'webhook.test' });
    const signed = `${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`;
    const expected = createHmac('sha256', Buffer.from(secret.slice('whsec_'.length), 'base64')).update(signed).digest('base64');
    expect(String(headers['webhook-signature']).split(' ')).toContain(`v1,${expected}`);
    await expectAccessible(page, 'webhook with its delivery log');

    // The payload as it was POSTed.
    await delivered.getByRole('button', { name: /^Payload/ }).click();
    const payload = page.getByRole('dialog', { name: 'Delivery of webhook.test' });
    await payload.getByText('"type": "webhook.test"').waitFor();
    await payload.getByRole('button', { name: 'Close' }).click();

    // The receiver is down: both attempts fail and the delivery shows it; up again, Retry delivers it.
    failing = true;
    await page.getByRole('button', { name: 'Send test event' }).click();
    const failed = log.locator('tr[data-status="failed"]');
    await failed.waitFor({ timeout: 60_000 });
    await expect.poll(async () => (await failed.getByRole('cell').allTextContents()).slice(0, 4)).toEqual(['webhook.test', 'failed', '2', expect.stringMatching(/^503/)]);
    failing = false;
    await failed.getByRole('button', { name: /^Retry/ }).click();
    await expect.poll(() => log.locator('tr[data-status="delivered"]').count(), { timeout: 60_000 }).toBe(2);
    await shot(page, 'webhook');
    expect(received).toHaveLength(4);

    // Rotate secret: a new one, shown once.
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    await secretDialog.getByText('you will not see it again').waitFor();
    const rotated = await secretDialog.getByLabel('Signing secret').inputValue();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await secretDialog.getByRole('button', { name: 'I have stored the secret' }).click();
    await secretDialog.waitFor({ state: 'detached' });
    const webhookPath = new URL(page.url()).pathname;

    // The list; then everything at 375 px.
    await menuItem(page, 'Webhooks').click();
    const row = page.getByRole('row').filter({ hasText: receiverUrl });
    await expect.poll(async () => (await row.getByRole('cell').allTextContents()).slice(0, 4)).toEqual([receiverUrl, 'Website CRM sync', 'lead.created, inquiry.received', 'Yes']);
    await expectAccessible(page, 'webhooks list');
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      for (const path of ['/webhooks', webhookPath, webhookPath.replace(/show$/, 'edit'), '/webhooks/create']) {
        await page.goto(`${base}${path}`);
        await page.locator('#main-content').waitFor();
        await quiet(page);
        await expectNoOverflow(page, `${path} at 375 px`);
        await expectAccessible(page, `${path} at 375 px`);
      }
    } finally {
      await page.setViewportSize({ width: 1200, height: 760 });
    }
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  /** A GET of the API with the browser's session. */
  function fetchJson(path: string) {
    return page.evaluate(async (url) => (await fetch(url, { credentials: 'same-origin' })).json(), path);
  }
});
