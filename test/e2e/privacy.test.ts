import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describe, expect, test } from 'vitest';
import { consoleForSteps, expectAccessible, expectNoOverflow, field, heading, menuItem, poll, quiet, signIn, SKIP_BROWSER } from './harness.js';

// Privacy requests in the staff console, in Chromium against the real service (see ./harness.ts): an export made on
// the screen and its JSON file downloaded, an erase confirmed in its dialog (which says what will happen), the list of
// requests, and the lead's page showing the anonymised name. axe at 1200 and 375 px on the screen and the dialog.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };
const PERSON = { email: 'rosa.privado@example.com', phone: '+63 917 555 0101' };

if (SKIP_BROWSER) {
  console.warn('test/e2e/privacy.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

describe.skipIf(SKIP_BROWSER)('privacy requests in Chromium', { timeout: 180_000 }, () => {
  const browser = consoleForSteps(ADMIN);
  const apiCall = browser.api;
  let page: Page;
  let base = '';
  let leadId = '';

  test('sign in; a buyer with a lead and an inquiry', async () => {
    ({ page, base } = browser.app());
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
    leadId = (await apiCall('POST', '/api/crm/leads', { first_name: 'Rosa', last_name: 'Privado', ...PERSON, notes: 'Rosa prefers calls after 5' })).id;
    await apiCall('POST', '/api/crm/inquiries', { name: 'Rosa Privado', email: PERSON.email, subject: 'Brochure', message: 'Please send the brochure' });
  });

  test('the screen: in the Customers menu; accessible at 1200 and 375 px', async () => {
    await menuItem(page, 'Privacy requests').click();
    await heading(page, /^Privacy requests$/).waitFor();
    await page.getByText('No privacy request yet.').waitFor();
    await expectAccessible(page, 'privacy requests');
    await page.setViewportSize({ width: 375, height: 740 });
    await page.reload();
    await heading(page, /^Privacy requests$/).waitFor();
    await quiet(page);
    await expectNoOverflow(page, 'privacy requests at 375 px');
    await expectAccessible(page, 'privacy requests at 375 px');
    await page.setViewportSize({ width: 1200, height: 760 });
  });

  test('a request with neither e-mail nor phone shows the reason under the fields', async () => {
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    await poll(() => field(page, 'E-mail address').getAttribute('aria-invalid')).toBe('true');
    await page.getByText('give the person\'s e-mail address, phone number or both').first().waitFor();
  });

  test('export: the counts, then one JSON file with the person\'s records', async () => {
    await field(page, 'E-mail address').fill(PERSON.email);
    await page.getByRole('button', { name: 'Export', exact: true }).click();
    await page.getByText(/^Exported: \d+ records found: 1 lead, 1 inquiry/).waitFor();
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download the export', exact: true }).click()]);
    expect(download.suggestedFilename()).toMatch(/^privacy-export-[0-9a-f-]{36}\.json$/);
    const document = JSON.parse(readFileSync((await download.path())!, 'utf8'));
    expect(document.leads.map((lead: any) => [lead.id, lead.first_name, lead.email])).toEqual([[leadId, 'Rosa', PERSON.email]]);
    expect(document.inquiries).toHaveLength(1);
    await page.getByRole('table', { name: 'Past privacy requests' }).getByRole('cell', { name: 'Export', exact: true }).waitFor();
  });

  test('erase: a confirmation says what will happen; once confirmed, the lead shows the anonymised name', async () => {
    await field(page, 'Phone number').fill(PERSON.phone);
    await page.getByRole('button', { name: 'Erase…' }).click();
    const dialog = page.getByRole('dialog', { name: `Erase the data of ${PERSON.email} / ${PERSON.phone}?` });
    await dialog.getByText(/names become “Erased person”/).waitFor();
    await dialog.getByText(/Nothing is deleted: statuses, dates, units and prices stay/).waitFor();
    await expectAccessible(page, 'erase confirmation');
    await page.setViewportSize({ width: 375, height: 740 });
    await expectAccessible(page, 'erase confirmation at 375 px');
    await page.setViewportSize({ width: 1200, height: 760 });
    // Cancel changes nothing.
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    expect((await apiCall('GET', `/api/crm/leads/${leadId}`)).first_name).toBe('Rosa');

    await page.getByRole('button', { name: 'Erase…' }).click();
    await dialog.getByRole('button', { name: 'Erase', exact: true }).click();
    await page.getByText(/^Erased: \d+ records anonymised: 1 lead, 1 inquiry/).waitFor();
    await page.getByRole('table', { name: 'Past privacy requests' }).getByRole('cell', { name: 'Erase', exact: true }).waitFor();
    await expectAccessible(page, 'privacy requests after an erase');

    await page.goto(`${base}/leads/${leadId}/show`);
    await page.getByText('Lead: Erased person').first().waitFor();
    expect(await page.getByText('Rosa').count()).toBe(0);
    const lead = await apiCall('GET', `/api/crm/leads/${leadId}`);
    expect(lead).toMatchObject({ first_name: 'Erased', last_name: 'person', phone: null, notes: null, email: `erased-${leadId}@invalid` });
    expect(browser.app().serverErrors, browser.app().log()).toEqual([]);
  });
});
