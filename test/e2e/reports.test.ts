import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, test } from 'vitest';
import { accessibleAtBothWidths, choose, chooseMany, type Console, consoleForSteps, expectAccessible, heading, menuItem, openScreen, poll, quiet, shot, signIn, SKIP_BROWSER, trackRequests } from './harness.js';

// The Reports section of the staff console, in Chromium against the real service (see ./harness.ts): leads, a
// reservation, a sale and activities seeded through the API; each report's totals equal the API's for the same query;
// range, filters and grouping kept in the address (a reloaded link shows the same figures, a refused one the API's
// message); "Show as table", Export CSV, the printed page without the navigation; the weekly e-mail switch on My
// account. axe at 1200 and 375 px on each report.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };
const PROJECT = 'Zephyr Heights';

if (SKIP_BROWSER) {
  console.warn('test/e2e/reports.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

/** The totals each report shows, by the label on the page. */
const SHOWN: Record<string, Record<string, string>> = {
  funnel: { Leads: 'leads', Contacted: 'contacted', Qualified: 'qualified', Reserved: 'reserved', Sold: 'sold' },
  'speed-to-lead': { Assigned: 'assigned', Contacted: 'contacted' },
  'agent-activity': { Calls: 'calls', 'E-mails': 'emails', Meetings: 'meetings', 'Site visits': 'site_visits', Reservations: 'reservations', 'Follow-ups overdue': 'followups_overdue' },
  projects: { Reservations: 'reservations', Sales: 'sales', Cancellations: 'cancellations', 'Available units': 'available' },
};

describe.skipIf(SKIP_BROWSER)('reports in Chromium', { timeout: 180_000 }, () => {
  const browser = consoleForSteps(ADMIN);
  const apiCall = browser.api;
  let app: Console;
  let page: Page;
  let base = '';
  let projectId = '';

  beforeAll(() => {
    app = browser.app();
    ({ page, base } = app);
  });

  /** The report's figures on the page: each total's label → its text. */
  const totalsOn = (on: Page) => on.locator('dl[aria-label="Totals"]').evaluate((dl) => Object.fromEntries(
    [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent]),
  ));

  /** The API's totals for the query the page's address holds, as the page shows those figures (all counts here). */
  async function expectedTotals(on: Page) {
    const url = new URL(on.url());
    const name = url.pathname.split('/').pop()!;
    const answer = await apiCall('GET', `/api/crm/reports/${name}${url.search}`);
    return Object.fromEntries(Object.entries(SHOWN[name]).map(([label, key]) => [label, String(answer.totals[key])]));
  }

  /** Until the page shows the API's totals for its address (a figure the page does not show is left out). */
  async function expectApiFigures(on: Page = page) {
    await quiet(on);
    const expected = await expectedTotals(on);
    await poll(async () => {
      const shown = await totalsOn(on);
      return Object.fromEntries(Object.keys(expected).map((label) => [label, shown[label]]));
    }, `totals of ${on.url()}`).toEqual(expected);
    return expected;
  }

  const search = (on: Page = page) => new URL(on.url()).searchParams;

  test('sign in; leads, a reservation, a sale and activities exist', async () => {
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
    const adminId = (await apiCall('GET', '/api/auth/session')).user.id;
    projectId = (await apiCall('POST', '/api/cms/projects', { name: PROJECT, status: 'active', type: 'residential' })).id;
    const units = [];
    for (const lot of ['1', '2', '3']) units.push((await apiCall('POST', '/api/crm/inventory', { project_id: projectId, block: 'A', lot, price: 2_000_000 })).id);
    const leads = [];
    for (const [i, source] of ['website', 'website', 'website', 'referral', 'event'].entries()) {
      leads.push((await apiCall('POST', '/api/crm/leads', {
        first_name: 'Lead', last_name: `Number ${i}`, phone: `+63 917 555 01${i}0`, source, interest: i < 3 ? `${PROJECT}, 2 bedrooms` : null, assigned_to: adminId,
      })).id);
    }
    await apiCall('PATCH', `/api/crm/leads/${leads[0]}`, { status: 'contacted' });
    await apiCall('PATCH', `/api/crm/leads/${leads[0]}`, { status: 'qualified' });
    await apiCall('PATCH', `/api/crm/leads/${leads[1]}`, { status: 'contacted' });
    await apiCall('PATCH', `/api/crm/leads/${leads[3]}`, { status: 'contacted' });
    const reservation = await apiCall('POST', '/api/crm/reservations', { inventory_id: units[0], client_name: 'Sol Buyer', contact_number: '+63 917 555 0999', lead_id: leads[0] });
    await apiCall('PATCH', '/api/projects/inventory', { inventory_id: units[0], status: 'sold', sold_to: reservation.id });
    for (const [lead, body] of [[leads[0], { kind: 'call', outcome: 'answered' }], [leads[1], { kind: 'call', outcome: 'no_answer' }], [leads[1], { kind: 'email', body: 'Brochure sent' }], [leads[3], { kind: 'meeting', place: 'Office', occurred_at: new Date(Date.now() - 60_000).toISOString() }]] as const) {
      await apiCall('POST', `/api/crm/leads/${lead}/activities`, body);
    }
    const funnel = await apiCall('GET', '/api/crm/reports/funnel');
    expect(funnel.totals).toMatchObject({ leads: 5, contacted: 3, qualified: 1, reserved: 1, sold: 1 });
  });

  test('Reports in the navigation opens the funnel, whose figures are the API\'s; axe at 1200 and 375 px', async () => {
    await openScreen(page, 'Reports');
    expect(new URL(page.url()).pathname).toBe('/reports/funnel');
    await page.getByRole('tab', { name: 'Funnel', selected: true }).waitFor();
    expect(await expectApiFigures()).toEqual({ Leads: '5', Contacted: '3', Qualified: '1', Reserved: '1', Sold: '1' });
    await page.getByRole('img', { name: 'Leads at each stage' }).waitFor();
    await accessibleAtBothWidths(page, 'funnel report', () => page.getByRole('img', { name: 'Leads at each stage' }).waitFor(), { reloadAfter: true });
    // Tall enough for the filters, the totals and the first chart.
    await page.setViewportSize({ width: 1200, height: 1100 });
    await quiet(page);
    await shot(page, 'reports-funnel');
    await page.setViewportSize({ width: 1200, height: 760 });
  });

  test('changing the range, a filter and the grouping changes the address; the figures follow', async () => {
    await quiet(page);
    await chooseMany(page, 'Source', ['website']);
    await poll(() => search().get('source'), `source in ${page.url()}`).toBe('website');
    expect(await expectApiFigures()).toEqual({ Leads: '3', Contacted: '2', Qualified: '1', Reserved: '1', Sold: '1' });

    await choose(page, 'Group by', 'Project');
    await poll(() => search().get('group_by')).toBe('project');
    await page.getByRole('img', { name: 'Stages by project' }).waitFor();

    await choose(page, 'Quick range', 'Last 12 months');
    await poll(() => search().get('from')).toBeTruthy();
    const { from, to } = Object.fromEntries(search());
    expect(new Date(`${to}T00:00:00Z`).getTime() - new Date(`${from}T00:00:00Z`).getTime()).toBeLessThanOrEqual(366 * 86_400_000);
    await expectApiFigures();

    await page.getByRole('combobox', { name: 'Agent' }).fill('Admin');
    await page.getByRole('option', { name: 'Administrator' }).click();
    await poll(() => search().get('agent_id')).toBeTruthy();
    expect(await expectApiFigures()).toEqual({ Leads: '3', Contacted: '2', Qualified: '1', Reserved: '1', Sold: '1' });
    await choose(page, 'Project', PROJECT);
    await poll(() => search().get('project_id')).toBe(projectId);
    expect(await expectApiFigures()).toEqual({ Leads: '3', Contacted: '2', Qualified: '1', Reserved: '1', Sold: '1' });
  });

  test('a shared link shows the same report, reloaded and in another tab', async () => {
    const shared = page.url();
    const before = await totalsOn(page);
    await page.reload();
    await expectApiFigures();
    expect(await totalsOn(page)).toEqual(before);
    expect(page.url()).toBe(shared);
    const other = await app.context.newPage();
    try {
      await other.goto(shared);
      await other.locator('dl[aria-label="Totals"]').waitFor();
      await poll(() => totalsOn(other)).toEqual(before);
      await other.getByRole('combobox', { name: 'Group by' }).filter({ hasText: 'Project' }).waitFor();
    } finally {
      await other.close();
    }
  });

  test('Show as table: a table with a caption and header cells, with the API\'s numbers', async () => {
    await page.goto(`${base}/reports/funnel?group_by=source`);
    await expectApiFigures();
    const answer = await apiCall('GET', '/api/crm/reports/funnel?group_by=source');
    const stages = page.getByRole('region', { name: 'Leads at each stage', exact: true });
    expect(await stages.getByRole('table').count()).toBe(0);
    await stages.getByRole('switch', { name: /^Show as table/ }).click();
    const table = stages.getByRole('table', { name: /^Leads at each stage/ });
    await table.waitFor();
    expect(await table.getByRole('columnheader').allTextContents()).toEqual(['Stage', 'Leads', 'Share of leads']);
    const rows = await table.getByRole('row').evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.children].map((cell) => cell.textContent)));
    expect(rows.map((row) => row.slice(0, 2))).toEqual([
      ['Leads', String(answer.totals.leads)], ['Contacted', String(answer.totals.contacted)], ['Qualified', String(answer.totals.qualified)],
      ['Reserved', String(answer.totals.reserved)], ['Sold', String(answer.totals.sold)],
    ]);
    expect(rows[1][2]).toBe(`${Math.round(answer.totals.contacted_rate * 1000) / 10}%`);

    const groups = page.getByRole('region', { name: 'Stages by source', exact: true });
    await groups.getByRole('switch', { name: /^Show as table/ }).click();
    const website = answer.rows.find((row: any) => row.key === 'website');
    const row = groups.getByRole('row').filter({ has: page.getByRole('rowheader', { name: 'Website' }) });
    expect((await row.getByRole('cell').allTextContents()).slice(0, 5)).toEqual(['leads', 'contacted', 'qualified', 'reserved', 'sold'].map((key) => String(website[key])));
    await expectAccessible(page, 'funnel shown as tables');
  });

  test('Export CSV downloads the same report as CSV', async () => {
    const query = new URL(page.url()).search;
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8').trim().split(/\r?\n/);
    expect(csv[0]).toBe('key,label,leads,contacted,qualified,reserved,sold,contacted_rate,qualified_rate,reserved_rate,sold_rate');
    const answer = await apiCall('GET', `/api/crm/reports/funnel${query}`);
    expect(csv.length).toBe(answer.rows.length + 2);
    expect(csv.at(-1)!.split(',').slice(0, 7)).toEqual(['total', 'Total', ...['leads', 'contacted', 'qualified', 'reserved', 'sold'].map((key) => String(answer.totals[key]))]);
  });

  test('printed: no navigation, filters or buttons; the charts and their tables stay', async () => {
    await expect(menuItem(page, 'Reports').isVisible()).resolves.toBe(true);
    await page.emulateMedia({ media: 'print' });
    try {
      await poll(() => menuItem(page, 'Reports').isVisible()).toBe(false);
      expect(await page.getByRole('search', { name: 'Report range and filters' }).isVisible()).toBe(false);
      expect(await page.getByRole('button', { name: 'Print' }).isVisible()).toBe(false);
      expect(await page.getByRole('banner').isVisible()).toBe(false);
      expect(await page.getByRole('img', { name: 'Leads at each stage' }).isVisible()).toBe(true);
      expect(await page.locator('dl[aria-label="Totals"]').isVisible()).toBe(true);
      // Both charts' tables, the one switched to a table and the one not.
      expect(await page.getByRole('table', { name: /^Leads at each stage/ }).isVisible()).toBe(true);
    } finally {
      await page.emulateMedia({ media: 'screen' });
    }
    await poll(() => menuItem(page, 'Reports').isVisible()).toBe(true);
  });

  test('a link the API refuses shows its message, not a crash; a range without leads says so', async () => {
    await page.goto(`${base}/reports/funnel?from=2026-02-30`);
    await page.getByRole('alert').filter({ hasText: 'Please correct: from: must be a valid date' }).waitFor();
    await page.goto(`${base}/reports/funnel?from=2026-03-01&to=2026-02-01`);
    await page.getByRole('alert').filter({ hasText: 'Please correct: from: must not be after to' }).waitFor();
    await page.goto(`${base}/reports/speed-to-lead?group_by=month`);
    await page.getByRole('alert').filter({ hasText: /group_by/ }).waitFor();
    await heading(page, /^Reports$/).waitFor();
    await page.goto(`${base}/reports/funnel?from=2020-01-01&to=2020-01-31`);
    await page.getByText('No leads in this range.').waitFor();
    expect(await totalsOn(page)).toMatchObject({ Leads: '0' });
    await expectAccessible(page, 'empty funnel');
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  test('speed to lead, agent activity and projects: the API\'s figures, each chart named; axe at 1200 and 375 px', async () => {
    await page.goto(`${base}/reports/funnel?source=website`);
    await page.getByRole('tab', { name: 'Agent activity' }).click();
    // The tabs keep the range and filters.
    await poll(() => new URL(page.url()).pathname).toBe('/reports/agent-activity');
    expect(search().get('source')).toBe('website');
    expect(await expectApiFigures()).toMatchObject({ Calls: '2', 'E-mails': '1', Meetings: '0', Reservations: '1' });
    await accessibleAtBothWidths(page, 'agent activity report', () => page.getByRole('img', { name: 'Activity by agent and week' }).waitFor(), { reloadAfter: true });

    await page.goto(`${base}/reports/speed-to-lead`);
    await expectApiFigures();
    await accessibleAtBothWidths(page, 'speed to lead report', () => page.locator('dl[aria-label="Totals"]').waitFor(), { reloadAfter: true });

    await page.goto(`${base}/reports/projects?group_by=month`);
    expect(await expectApiFigures()).toMatchObject({ Reservations: '1', Sales: '1', 'Available units': '2' });
    await page.getByRole('img', { name: 'Units by status at the end of each month' }).waitFor();
    await accessibleAtBothWidths(page, 'projects report', () => page.getByRole('img', { name: 'Months of inventory left' }).waitFor(), { reloadAfter: true });
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  test('someone with crm read only has Reports too, its filters read without a refusal, and sees their own scope\'s figures', async () => {
    const ray = { email: 'ray@example.com', password: 'Ray-Reader-1!', name: 'Ray Reader' };
    const user = await apiCall('POST', '/api/iam/users', ray);
    await apiCall('POST', '/api/iam/module-access', { user_id: user.id, module: 'crm', can_read: true, can_write: false, scope: 'own' });
    const context = await app.browser.newContext({ viewport: { width: 1200, height: 760 }, locale: 'en-GB', timezoneId: 'UTC', reducedMotion: 'reduce' });
    try {
      const other = await context.newPage();
      trackRequests(other);
      const refused: string[] = [];
      other.on('response', (response) => response.status() >= 400 && refused.push(`${response.status()} ${response.url()}`));
      await signIn(other, base, ray.email, ray.password);
      await heading(other, /^My day$/).waitFor();
      await menuItem(other, 'Reports').click();
      await heading(other, /^Reports$/).waitFor();
      // Ray owns no lead: his own scope counts none.
      await other.getByText('No leads in this range.').waitFor();
      expect(await totalsOn(other)).toMatchObject({ Leads: '0' });
      await quiet(other);
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
  });

  test('My account: the weekly report switch persists', async () => {
    await page.goto(`${base}/account`);
    const weekly = page.getByRole('switch', { name: 'Weekly report e-mail (Mondays)' });
    await weekly.waitFor();
    expect(await weekly.isChecked()).toBe(false);
    await weekly.click();
    await poll(async () => (await apiCall('GET', '/api/auth/preferences')).weekly_report).toBe(true);
    await page.reload();
    await poll(() => weekly.isChecked()).toBe(true);
    await expectAccessible(page, 'my account with the weekly switch');
    await weekly.click();
    await poll(async () => (await apiCall('GET', '/api/auth/preferences')).weekly_report).toBe(false);
    expect(app.serverErrors, app.log()).toEqual([]);
  });
});
