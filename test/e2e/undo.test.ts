import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type Console, expectAccessible, heading, menuItem, signIn, SKIP_BROWSER, startConsole, stepsInOrder } from './harness.js';

// Undo in the staff console in Chromium against the real service (see ./harness.ts): a record set back from
// its History panel after a confirmation listing the fields that change, and a deleted record brought back from its
// module's Trash; one resource of each module (an article, a lead). Steps run in order on one browser.

const ADMIN = { email: 'admin@example.com', password: 'Console-Admin-1!' };

if (SKIP_BROWSER) {
  console.warn('test/e2e/undo.test.ts skipped: no Chromium found (apt-get install -y chromium, or set CHROMIUM_PATH); set E2E_REQUIRED=1 to make this a failure');
}

describe.skipIf(SKIP_BROWSER)('undo in Chromium', { timeout: 180_000 }, () => {
  let app: Console;
  let page: Page;
  let base = '';

  beforeAll(async () => {
    app = await startConsole(ADMIN);
    ({ page, base } = app);
    await signIn(page, base, ADMIN.email, ADMIN.password);
    await heading(page, 'Dashboard').waitFor();
  }, 180_000);

  // After a failed step the rest are skipped; the failure is told with a screenshot (./harness.ts).
  stepsInOrder(() => app);

  afterAll(async () => {
    expect(app?.serverErrors ?? []).toEqual([]);
    await app?.close();
  }, 180_000);

  /** A call of the API with the browser's session cookie; its JSON answer (it must succeed). */
  async function apiCall(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, data?: object): Promise<any> {
    const response = await page.request.fetch(`${base}${path}`, { method, data });
    expect(response.ok(), `${method} ${path}: ${response.status()} ${await response.text()}`).toBe(true);
    return response.json();
  }

  /** Opens a record's page and its History panel, then restores the newest entry from the confirmation dialog. */
  async function restoreFromHistory(path: string, field: string, now: string, restored: string) {
    await page.goto(`${base}${path}`);
    await page.getByRole('button', { name: 'History' }).click();
    const history = page.getByRole('region', { name: 'History' });
    await history.getByRole('button', { name: /^Restore the .+ to its state before this change$/ }).first().click();
    const dialog = page.getByRole('dialog');
    const changes = dialog.getByRole('table', { name: 'Fields that will change' });
    await changes.waitFor();
    // The confirmation lists what changes: the field, its value now and the value restored.
    await expect.poll(() => changes.getByRole('row').nth(1).innerText()).toBe(`${field}\t${now}\t${restored}`);
    await expectAccessible(page, `restore confirmation of ${path}`);
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
  }

  /** Opens a module's Trash from the menu and restores the entry titled so, after its confirmation. */
  async function restoreFromTrash(menuGroup: string, title: string) {
    await page.getByRole('group', { name: menuGroup }).getByRole('menuitem', { name: 'Trash', exact: true }).click();
    await heading(page, `Trash: ${menuGroup}`).waitFor();
    const row = page.getByRole('row').filter({ hasText: title });
    await row.waitFor();
    await expectAccessible(page, `trash of ${menuGroup}`);
    await row.getByRole('button', { name: `Restore ${title}` }).click();
    const dialog = page.getByRole('dialog', { name: `Restore ${title}?` });
    await dialog.getByRole('button', { name: 'Restore', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await row.waitFor({ state: 'detached' });
  }

  test('cms: an article\'s overwritten title is restored from its history', async () => {
    const { id } = await apiCall('POST', '/api/cms/articles', { title: 'Tower B tops off', content: 'Body', type: 'news' });
    await apiCall('PATCH', `/api/cms/articles/${id}`, { title: 'Overwritten by mistake' });
    await restoreFromHistory(`/articles/${id}/show`, 'title', 'Overwritten by mistake', 'Tower B tops off');
    await expect.poll(async () => (await apiCall('GET', `/api/cms/articles/${id}`)).title).toBe('Tower B tops off');
    const [entry] = (await apiCall('GET', `/api/cms/articles/${id}/history?limit=1`)).data;
    expect(entry).toMatchObject({ action: 'update', changes: { after: { title: 'Tower B tops off' } } });
    expect(entry.restored_from).toBeTruthy();
  });

  test('cms: a deleted article comes back from the Content trash with its id', async () => {
    const { id } = await apiCall('POST', '/api/cms/articles', { title: 'Deleted by mistake', content: 'Body', type: 'blog' });
    await page.goto(`${base}/articles/${id}/show`);
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByText('It goes to the trash').waitFor();
    await page.getByRole('dialog').getByRole('button', { name: 'Confirm' }).click();
    await expect.poll(async () => (await page.request.get(`${base}/api/cms/articles/${id}`)).status()).toBe(404);
    await restoreFromTrash('Content', 'Deleted by mistake');
    expect((await apiCall('GET', `/api/cms/articles/${id}`)).title).toBe('Deleted by mistake');
  });

  test('crm: a lead\'s status changed by the wrong agent is restored; a deleted lead comes back from the Customers trash', async () => {
    const { id } = await apiCall('POST', '/api/crm/leads', { first_name: 'Maria', last_name: 'Santos', email: 'maria.undo@example.com', status: 'qualified' });
    await apiCall('PATCH', `/api/crm/leads/${id}`, { status: 'lost' });
    await restoreFromHistory(`/leads/${id}/show`, 'status', 'lost', 'qualified');
    await expect.poll(async () => (await apiCall('GET', `/api/crm/leads/${id}`)).status).toBe('qualified');

    // Away from the lead's page first, until the list shows the lead: deleted under its own page, the page finds it
    // gone and goes back to the list, which could land after the click on Trash and leave the list showing.
    const listed = () => page.getByRole('link', { name: /Maria/ }).or(page.getByText('maria.undo@example.com')).first();
    await menuItem(page, 'Leads').click();
    await listed().waitFor();
    await apiCall('DELETE', `/api/crm/leads/${id}`);
    await restoreFromTrash('Customers', 'Maria Santos');
    expect(await apiCall('GET', `/api/crm/leads/${id}`)).toMatchObject({ id, first_name: 'Maria', status: 'qualified' });
    await menuItem(page, 'Leads').click();
    await listed().waitFor();
  });
});
