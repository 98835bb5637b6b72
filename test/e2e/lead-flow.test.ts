import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { accessibleAtBothWidths, choose, type Console, expectAccessible, field, heading, menuItem, quiet, shot, signIn, SKIP_BROWSER, startConsole, stepsInOrder } from './harness.js';

// Lead flow in the staff console, in Chromium against the real service (see ./harness.ts): the settings screen makes a
// first-to-claim group and a rule (a refused value shown under its field), a lead routed to the group waits on My day
// with a countdown and is claimed from there (a lead someone else claimed first says so), the lead page shows its
// flow, the Away switch, and the live stream: changes made through the API by someone else appear in an open list and
// in the bell without a reload. axe at 1200 and 375 px on each new screen.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };
const ANA = { email: 'ana@example.com', password: 'Ana-Agent-1!', name: 'Ana Agent' };

if (SKIP_BROWSER) {
  console.warn('test/e2e/lead-flow.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

describe.skipIf(SKIP_BROWSER)('lead flow in Chromium', { timeout: 180_000 }, () => {
  let app: Console;
  let page: Page;
  let base = '';
  let adminId = '';
  let groupId = '';
  let anaId = '';
  let deeId = '';
  /** Ana's API calls, with her own session (she is another person than the one in the browser). */
  let asAna: (method: string, path: string, data?: object) => Promise<Response>;

  beforeAll(async () => {
    app = await startConsole(ADMIN);
    ({ page, base } = app);
  }, 180_000);

  afterAll(() => app?.close(), 180_000);

  stepsInOrder(() => app);

  const poll = <T>(read: () => Promise<T> | T, message?: string) => expect.poll(read, { timeout: 30_000, message });

  async function apiCall(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, data?: object): Promise<any> {
    const response = await page.request.fetch(`${base}${path}`, { method, data });
    expect(response.ok(), `${method} ${path}: ${response.status()} ${await response.text()}`).toBe(true);
    return response.status() === 204 ? undefined : response.json();
  }

  test('sign in; Ana, an agent, exists with crm write', async () => {
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
    adminId = (await apiCall('GET', '/api/auth/session')).user.id;
    const ana = await apiCall('POST', '/api/iam/users', ANA);
    anaId = ana.id;
    await apiCall('POST', '/api/iam/module-access', { user_id: ana.id, module: 'crm', can_read: true, can_write: true });
    const login = await fetch(`${base}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ANA.email, password: ANA.password }) });
    expect(login.status).toBe(200);
    const { token } = ((await login.json()) as { session: { token: string } }).session;
    asAna = (method, path, data) => fetch(`${base}${path}`, {
      method, headers: { ...(data ? { 'content-type': 'application/json' } : {}), authorization: `Bearer ${token}` }, body: data ? JSON.stringify(data) : undefined,
    });
  });

  test('settings: a first-to-claim group made on the screen (a refused value shown under its field), then a rule sending leads to it', async () => {
    await menuItem(page, 'Lead flow').click();
    await heading(page, /^Lead flow$/).waitFor();
    await page.getByText('No rules: new leads stay unassigned.').waitFor();

    await page.getByRole('button', { name: 'Add group' }).click();
    const dialog = page.getByRole('dialog', { name: 'New group' });
    await field(page, 'Name').fill('Tower B sales');
    await choose(page, 'How leads are handed out', 'First to claim');
    for (const name of ['Administrator', ANA.name]) {
      const picker = dialog.getByRole('combobox', { name: 'Add a member' });
      await picker.fill(name.split(' ')[0]);
      await page.getByRole('option', { name }).click();
      await dialog.getByRole('button', { name: 'Add', exact: true }).click();
      await dialog.getByRole('listitem').filter({ hasText: name }).waitFor();
    }
    await dialog.getByRole('combobox', { name: 'Fallback person' }).fill('Ana');
    await page.getByRole('option', { name: ANA.name }).click();
    // More than the API allows: its message appears under the field, and nothing is created.
    await field(page, 'Minutes to claim').fill('45');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await poll(() => field(page, 'Minutes to claim').getAttribute('aria-invalid')).toBe('true');
    expect((await apiCall('GET', '/api/crm/lead-flow/groups')).data).toEqual([]);
    await expectAccessible(page, 'group form with a refused value');
    await field(page, 'Minutes to claim').fill('10');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await dialog.waitFor({ state: 'detached' });
    const groups = (await apiCall('GET', '/api/crm/lead-flow/groups')).data;
    expect(groups.map((g: any) => [g.name, g.kind, g.claim_minutes, g.members.map((m: any) => m.name)])).toEqual([['Tower B sales', 'first_to_claim', 10, ['Administrator', ANA.name]]]);
    groupId = groups[0].id;
    const card = page.getByRole('listitem', { name: 'Tower B sales' });
    await card.getByText('10 minutes to claim').waitFor();
    await card.getByText(`Fallback: ${ANA.name}`).waitFor();

    await page.getByRole('button', { name: 'Add rule' }).click();
    const ruleDialog = page.getByRole('dialog', { name: 'New rule' });
    await field(page, 'Name').fill('Leads from the API');
    await choose(page, 'Arrived by', 'api');
    await choose(page, 'Group', 'Tower B sales (First to claim)');
    await ruleDialog.getByRole('button', { name: 'Save' }).click();
    await ruleDialog.waitFor({ state: 'detached' });
    const rules = (await apiCall('GET', '/api/crm/lead-flow/rules')).data;
    expect(rules.map((r: any) => [r.name, r.channel, r.assign_group_id])).toEqual([['Leads from the API', 'api', groupId]]);
    await page.getByRole('listitem', { name: 'Rule 1: Leads from the API' }).getByText('Goes to: Tower B sales (First to claim)').waitFor();
    await accessibleAtBothWidths(page, 'lead flow settings', () => page.getByRole('listitem', { name: 'Rule 1: Leads from the API' }).waitFor());
    await shot(page, 'lead-flow-settings');
  });

  test('My day: a lead routed to the group waits with its pool and a countdown; Claim opens it, and its page shows its flow', async () => {
    await apiCall('POST', '/api/crm/leads', { first_name: 'Dee', last_name: 'Waiting', phone: '+63 917 555 0404', source: 'website', interest: 'Tower B, 2 bedrooms' });
    await menuItem(page, 'My day').click();
    await heading(page, /^My day$/).waitFor();
    const toClaim = page.getByRole('list', { name: 'Leads to claim' });
    const item = toClaim.getByRole('listitem').filter({ hasText: 'Dee Waiting' });
    await item.getByText(/In Tower B sales \(First to claim\)/).waitFor();
    await item.getByText(/\d+:\d\d left to claim/).waitFor();
    await accessibleAtBothWidths(page, 'My day', () => item.waitFor());
    await shot(page, 'my-day');

    await item.getByRole('button', { name: 'Claim Dee Waiting' }).click();
    await page.getByText('Lead: Dee Waiting').first().waitFor();
    const lead = (await apiCall('GET', '/api/crm/leads?q=Dee')).data[0];
    expect(lead.assigned_to?.id).toBe(adminId);
    deeId = lead.id;
    await page.getByRole('region', { name: 'Lead flow' }).waitFor();
    await expectAccessible(page, 'lead page with its flow');
  });

  test('My day: a lead someone else claimed a moment earlier says so', async () => {
    // The live stream would take the lead off the list at once: without it, the list still offers it.
    await page.route(/\/api\/live/, (route) => route.abort());
    const cy = await apiCall('POST', '/api/crm/leads', { first_name: 'Cy', last_name: 'Second', phone: '+63 917 555 0505', source: 'website' });
    await page.goto(`${base}/my-day`);
    const item = page.getByRole('list', { name: 'Leads to claim' }).getByRole('listitem').filter({ hasText: 'Cy Second' });
    await item.waitFor();
    expect((await asAna('POST', `/api/crm/leads/${cy.id}/claim`)).status).toBe(200);
    await item.getByRole('button', { name: 'Claim Cy Second' }).click();
    await page.getByText('Someone else claimed it first').waitFor();
    await item.waitFor({ state: 'detached' });
    expect(new URL(page.url()).pathname).toBe('/my-day');
    await page.unrouteAll();
  });

  test('the Away switch marks me away (preferences), and back', async () => {
    await page.goto(`${base}/my-day`);
    const away = page.getByRole('switch', { name: /^Away/ });
    await poll(() => away.isEnabled()).toBe(true);
    await away.click();
    await poll(async () => (await apiCall('GET', '/api/auth/preferences')).away).toBe(true);
    await poll(() => away.isChecked()).toBe(true);
    await away.click();
    await poll(async () => (await apiCall('GET', '/api/auth/preferences')).away).toBe(false);
  });

  test('live: a lead someone else adds appears in the open list, and one they assign to me rings the bell, without a reload', async () => {
    await page.goto(`${base}/leads`);
    await page.getByRole('cell', { name: 'Waiting' }).waitFor();
    await quiet(page);
    // A mark on this very document: a reload would take it away.
    await page.evaluate(() => ((window as any).__sameDocument = true));
    const bell = page.getByRole('button', { name: /^Notifications/ });
    const before = (await apiCall('GET', '/api/notifications/unread-count')).unread as number;

    const created = await asAna('POST', '/api/crm/leads', { first_name: 'Eve', last_name: 'Streamed', phone: '+63 917 555 0606', source: 'referral', assigned_to: adminId });
    expect(created.status).toBe(201);
    await page.getByRole('cell', { name: 'Streamed' }).waitFor();
    await poll(() => bell.getAttribute('aria-label')).toBe(`Notifications, ${before + 1} unread`);
    expect(await page.evaluate(() => (window as any).__sameDocument)).toBe(true);
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  test('departments: a manager is chosen on the form', async () => {
    await page.goto(`${base}/departments/create`);
    await field(page, 'Name').fill('Tower B');
    await page.getByRole('combobox', { name: 'Manager' }).fill('Ana');
    await page.getByRole('option', { name: ANA.name }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await poll(async () => (await apiCall('GET', '/api/iam/departments')).data.find((d: any) => d.name === 'Tower B')?.manager_id).toBe(anaId);
    // The department's page names the manager.
    await page.getByRole('link', { name: ANA.name }).waitFor();
    expect(app.serverErrors, app.log()).toEqual([]);
  });

  test('the lead page offers Claim to a member of the group the lead waits in', async () => {
    const fay = await apiCall('POST', '/api/crm/leads', { first_name: 'Fay', last_name: 'Pooled', phone: '+63 917 555 0707', source: 'website' });
    await page.goto(`${base}/leads/${fay.id}/show`);
    const flow = page.getByRole('region', { name: 'Lead flow' });
    await flow.getByText(/This lead waits in Tower B sales, a group you belong to/).waitFor();
    await expectAccessible(page, 'lead page with Claim');
    await flow.getByRole('button', { name: 'Claim' }).click();
    await poll(async () => (await apiCall('GET', `/api/crm/leads/${fay.id}`)).assigned_to?.id).toBe(adminId);
    await flow.getByText(/a group you belong to/).waitFor({ state: 'detached' });
  });

  test('someone with crm read only sees the settings, and nothing to change them with; My day is their home page', async () => {
    const ray = { email: 'ray@example.com', password: 'Ray-Reader-1!', name: 'Ray Reader' };
    const user = await apiCall('POST', '/api/iam/users', ray);
    await apiCall('POST', '/api/iam/module-access', { user_id: user.id, module: 'crm', can_read: true, can_write: false });
    const context = await app.browser.newContext({ viewport: { width: 1200, height: 760 }, locale: 'en-GB', timezoneId: 'UTC', reducedMotion: 'reduce' });
    try {
      const other = await context.newPage();
      await signIn(other, base, ray.email, ray.password);
      await heading(other, /^My day$/).waitFor();
      // A lead waiting in a group Ray is not in is not his to claim.
      await other.getByText('No lead is waiting for you to claim it.').waitFor();
      await other.goto(`${base}/lead-flow`);
      await other.getByText('Administrators and department managers change these settings; you can read them.').waitFor();
      await other.getByRole('listitem', { name: 'Rule 1: Leads from the API' }).waitFor();
      expect(await other.getByRole('button', { name: /^Add / }).count()).toBe(0);
      expect(await other.getByRole('button', { name: /^(Edit|Delete) / }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  test('the lead page: an action plan attached and stopped; its flow names the rule that routed it', async () => {
    await apiCall('POST', '/api/crm/lead-flow/plans', { name: 'New lead calls', active_statuses: ['new', 'contacted'], steps: [{ kind: 'call', title: 'First call', offset_amount: 0, offset_unit: 'hours' }] });
    await page.goto(`${base}/leads/${deeId}/show`);
    const flow = page.getByRole('region', { name: 'Lead flow' });
    await flow.getByRole('button', { name: 'Attach plan' }).click();
    await choose(page, 'Plan', 'New lead calls');
    await flow.getByRole('button', { name: 'Attach', exact: true }).click();
    await flow.getByText(/Running since .* 1 open follow-up/).waitFor();
    await expectAccessible(page, 'lead flow with a running plan');
    await flow.getByRole('button', { name: 'Stop New lead calls' }).click();
    await flow.getByText(/Stopped .*stopped by hand/).waitFor();
    // GET /api/crm/leads/{id}/flow: how the lead was routed.
    await flow.getByText('Leads from the API').waitFor();
    await flow.getByText('First contact').waitFor();
    expect(app.serverErrors, app.log()).toEqual([]);
  });
});
