import { expect } from 'vitest';
import { as, createUser, type TestContext, type Who } from './helpers.js';

/**
 * Records created through the HTTP API, as a real client would: `make.project(ctx, { name: 'Arcadia' }, editor)`.
 * Each takes the fields to set over sensible defaults and who creates it (by default an admin with every grant,
 * created once per app), expects 201 and returns the record as sent, with its id.
 */

type Fields = Record<string, unknown>;
export type Made<T extends Fields> = T & { id: string };

const admins = new WeakMap<TestContext, Promise<Awaited<ReturnType<typeof createUser>>>>();

/** The app's admin for factories (cms, crm and iam: read, write, delete), created on first use. */
export function adminOf(ctx: TestContext) {
  let admin = admins.get(ctx);
  if (!admin) {
    admin = createUser(ctx, { cms: 'rwd', crm: 'rwd', iam: 'rwd' }, { name: 'Factory Admin' });
    admins.set(ctx, admin);
  }
  return admin;
}

let sequence = 0;
/** A short suffix unique in the run, for names that must not collide. */
const unique = () => `${Date.now().toString(36)}${(++sequence).toString(36)}`;

/** POSTs `body` to `url` as `by`, expects 201 and returns the body with the new id. */
async function created<T extends Fields>(ctx: TestContext, url: string, body: T, by?: Who): Promise<Made<T>> {
  const res = await as(ctx, by ?? (await adminOf(ctx))).post(url, body);
  expect(res.statusCode, res.body).toBe(201);
  return { ...body, id: res.json().id as string };
}

/** A factory for `url`: the defaults (which may look at the overrides) under the overrides. */
const factory = <D extends Fields>(url: string, defaults: (overrides: Fields) => D) =>
  async <O extends Fields = {}>(ctx: TestContext, overrides: O = {} as O, by?: Who) =>
    created(ctx, url, { ...defaults(overrides), ...overrides } as Omit<D, keyof O> & O, by);

export const make = {
  project: factory('/api/cms/projects', () => ({ name: `Project ${unique()}`, status: 'active', type: 'residential' })),
  article: factory('/api/cms/articles', () => ({ title: `Article ${unique()}`, content: 'Body', type: 'news' })),
  career: factory('/api/cms/careers', () => ({ title: `Career ${unique()}`, department: 'Engineering', location: 'Cebu', employment_type: 'full-time' })),
  amenity: factory('/api/cms/amenities', () => ({ name: `Amenity ${unique()}` })),
  department: factory('/api/iam/departments', () => ({ name: `Department ${unique()}` })),
  user: factory('/api/iam/users', () => {
    const name = `user-${unique()}`;
    return { email: `${name}@example.com`, name, password: 'Str0ng!pass' };
  }),
  /** A lead; with a phone number unless an e-mail address or a phone is given (a lead needs one of them). */
  lead: factory('/api/crm/leads', (o) => ({ first_name: 'Lead', last_name: unique(), ...(o.email || o.phone ? {} : { phone: '+63 900 000 0000' }) })),
  /** An inventory unit; in a new project unless `project_id` is given. */
  unit: async <O extends Fields = {}>(ctx: TestContext, overrides: O = {} as O, by?: Who) => {
    const project_id = overrides.project_id ?? (await make.project(ctx, {}, by)).id;
    return created(ctx, '/api/crm/inventory', { block: '1', lot: unique(), price: 1_000_000, ...overrides, project_id }, by);
  },
  /** A reservation; of a new unit unless `inventory_id` is given. */
  reservation: async <O extends Fields = {}>(ctx: TestContext, overrides: O = {} as O, by?: Who) => {
    const inventory_id = overrides.inventory_id ?? (await make.unit(ctx, {}, by)).id;
    const contact = overrides.email || overrides.contact_number ? {} : { contact_number: '+63 900 000 0000' };
    return created(ctx, '/api/crm/reservations', { client_name: `Client ${unique()}`, ...contact, ...overrides, inventory_id }, by);
  },
  inquiry: factory('/api/crm/inquiries', () => ({ name: 'Ina', email: `ina-${unique()}@example.com`, subject: 'Question', message: 'Hello' })),
  newsletter: factory('/api/crm/newsletters', () => ({ email: `reader-${unique()}@example.com` })),
  campaign: factory('/api/crm/campaigns', () => ({ name: `Campaign ${unique()}`, subject: 'News', content: 'Hello' })),
};
