import { generatePassword } from '../../auth/accounts.js';
import { clock } from '../../clock.js';
import { slugify } from '../../modules/cms/slug.js';
import type { Database } from '../../db/client.js';
import type { Api } from './api.js';
import { seedLeadFlow } from './lead-flow.js';
import {
  AMENITIES, ARTICLES, CALL_NOTES, CAMPAIGN, CAREERS, DEPARTMENTS, DRAFT_CAMPAIGN, EMAIL_NOTES, FIRST_NAMES, FOLLOW_UPS, GENERAL_INTERESTS, INQUIRY_RESPONSES,
  INQUIRY_TOPICS, LAST_NAMES, LEAD_NOTES, LOST_NOTES, MAIL_DOMAINS, MEETING_PLACES, PROJECTS, SOURCE_NOTES, STAFF, STATUS_NOTES, type DemoProject,
} from './content.js';
import { photo, type Scene } from './photos.js';
import type { Random } from './random.js';

/** How much of everything; the projects, articles, careers and amenities are the content's own. */
export const DEMO_SIZE = { leads: 120, reservations: 12, inquiries: 25, subscribers: 40, unsubscribes: 3 };

export type SeedContext = {
  /** The demo administrator's session. */
  api: Api;
  /** A visitor of the website (no session), each number from its own address. */
  visitor: (n: number) => Api;
  random: Random;
  adminId: string;
  /** How far back leads and inquiries go. */
  historyDays: number;
  /** The unsubscribe link of a campaign e-mail to `email`: path and query. */
  unsubscribePath: (email: string) => string;
  /** The database itself, for what has no API in this build yet (lead-flow groups and rules). */
  database: Database;
};

/** What was made, for the summary. */
export type Seeded = Record<string, number>;

const DAY = 24 * 3600 * 1000;
const daysAgo = (days: number) => new Date(Date.now() - days * DAY);
/** A moment after `from`, `days` later but never in the future. */
const later = (from: Date, days: number) => new Date(Math.min(from.getTime() + days * DAY, Date.now() - 60_000));

/**
 * Runs `write` while the service's clock reads `when`: the records it creates or changes, and their audit entries, say
 * they happened then, so leads and inquiries arrive over weeks as they would (the dashboard's per-day chart shows
 * them so). Requests run one at a time, so nothing else reads the clock meanwhile but the job queue, whose jobs
 * only ever see an earlier time.
 */
async function at<T>(when: Date, write: () => Promise<T>): Promise<T> {
  const now = clock.now;
  clock.now = () => new Date(when);
  try {
    return await write();
  } finally {
    clock.now = now;
  }
}

/** `count` moments in the last `days` days, oldest first, more of them recently (interest grows as a launch nears). */
const moments = (random: Random, count: number, days: number) =>
  Array.from({ length: count }, () => daysAgo(days * random.next() ** 1.5 + 0.05)).sort((a, b) => a.getTime() - b.getTime());

type Person = { first: string; last: string; name: string; email: string; phone: string };

/** A made-up person with an address of their own (example domains only) and a mobile number. */
function person(random: Random, taken: Set<string>): Person {
  const first = random.pick(FIRST_NAMES);
  const last = random.pick(LAST_NAMES);
  const local = `${first}.${last}`.toLowerCase().replace(/[^a-z.]/g, '');
  const domain = random.pick(MAIL_DOMAINS);
  let email = `${local}@${domain}`;
  for (let n = 2; taken.has(email); n++) email = `${local}${n}@${domain}`;
  taken.add(email);
  const phone = `+63 9${random.int(15, 99)} ${random.int(100, 999)} ${random.int(1000, 9999)}`;
  return { first, last, name: `${first} ${last}`, email, phone };
}

const BROWSERS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; SM-A546E) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
];
export const browserOf = (n: number) => BROWSERS[n % BROWSERS.length];
/** Documentation addresses (RFC 5737): a visitor's, never a real one. */
export const visitorAddress = (n: number) => `${n % 2 ? '198.51.100' : '203.0.113'}.${(n % 250) + 1}`;

const grantsOf = (letters: string) => ({ can_read: letters.includes('r'), can_write: letters.includes('w'), can_delete: letters.includes('d') });

/** Departments, and the staff besides the administrator; answers the sales agents' ids (who get leads assigned). */
async function staff(ctx: SeedContext, seeded: Seeded): Promise<string[]> {
  const departmentIds = new Map<string, string>();
  for (const name of DEPARTMENTS) departmentIds.set(name, (await ctx.api.post('/api/iam/departments', { name })).id);
  await ctx.api.patch(`/api/iam/users/${ctx.adminId}`, { department_id: departmentIds.get('Management') });
  const sales: string[] = [];
  for (const member of STAFF) {
    // Nobody knows these passwords: an administrator sets one from the console when someone wants to sign in as them.
    const { id } = await ctx.api.post('/api/iam/users', {
      email: member.email, name: member.name, password: generatePassword(), department_id: departmentIds.get(member.department), emailVerified: true,
    });
    for (const [module, letters] of Object.entries(member.grants)) {
      await ctx.api.post('/api/iam/module-access', { user_id: id, module, ...grantsOf(letters), ...(module === 'crm' ? { scope: member.scope } : {}) });
    }
    if (member.department === 'Sales') sales.push(id);
  }
  seeded.departments = DEPARTMENTS.length;
  seeded.users = STAFF.length + 1;
  return sales;
}

/** Generates a photo and uploads it; answers the path image fields take. */
async function uploadPhoto(ctx: SeedContext, scene: Scene, look: DemoProject['look'], title: string, filename: string) {
  return (await ctx.api.upload(await photo(scene, look, title, ctx.random), filename)).path;
}

/** A gallery image's caption; a street of houses shows one of the project's models. */
function caption(project: DemoProject, scene: Scene, index: number) {
  const model = project.models[index % project.models.length];
  if (scene === 'houses') return { caption: `${model.name}: street view`, house_model: model.name };
  return { caption: { pool: 'The swimming pool at the clubhouse', skyline: `${project.name} from across the road`, plaza: 'The main entrance and the lobby' }[scene], house_model: null };
}

type SeededProject = DemoProject & { id: string };

async function projects(ctx: SeedContext, seeded: Seeded): Promise<SeededProject[]> {
  const made: SeededProject[] = [];
  for (const project of PROJECTS) {
    const photos: string[] = [];
    for (const [i, scene] of project.scenes.entries()) photos.push(await uploadPhoto(ctx, scene, project.look, project.name, `${slugify(project.name)}-${i + 1}.jpg`));
    const { id } = await ctx.api.post('/api/cms/projects', {
      name: project.name, status: project.status, type: project.type, stage: project.stage, location: project.location, description: project.description,
      coordinates: project.coordinates, nearby_landmarks: project.landmarks, amenities: project.amenities, price_range: project.price,
      cover_photo: photos[0], seo_title: `${project.name} | ${project.location}`, seo_description: project.description.split('\n')[0],
      seo_keywords: [project.type, project.location, project.stage].join(', ').toLowerCase(),
      published: project.published, ...(project.published ? { publish_date: daysAgo(ctx.random.int(90, 400)).toISOString() } : {}),
    });
    // The cover is one of the gallery's photos, as on the website.
    await ctx.api.post(`/api/cms/projects/${id}/galleries`, { images: photos.map((image_url, i) => ({ image_url, display_order: i, ...caption(project, project.scenes[i], i) })) });
    made.push({ ...project, id });
    seeded.galleries = (seeded.galleries ?? 0) + photos.length;
  }
  seeded.projects = made.length;
  return made;
}

/** Amenities, articles (with cover photos) and job postings; a few are drafts. */
async function cmsContent(ctx: SeedContext, seeded: Seeded) {
  for (const amenity of AMENITIES) await ctx.api.post('/api/cms/amenities', amenity);
  seeded.amenities = AMENITIES.length;
  for (const article of ARTICLES) {
    const cover = await uploadPhoto(ctx, article.scene, article.look, article.title, `${slugify(article.title)}.jpg`);
    await ctx.api.post('/api/cms/articles', {
      title: article.title, type: article.type, content: article.content, tags: article.tags, cover_image: cover, published: article.published,
      ...(article.published ? { publish_date: daysAgo(article.daysAgo).toISOString() } : {}),
    });
  }
  seeded.articles = ARTICLES.length;
  for (const career of CAREERS) {
    await ctx.api.post('/api/cms/careers', { ...career, ...(career.published ? { publish_date: daysAgo(ctx.random.int(3, 45)).toISOString() } : {}) });
  }
  seeded.careers = CAREERS.length;
}

type Unit = { id: string; project: SeededProject };

/** Units of each project: house-and-lot projects by block and lot, towers by floor and unit. */
async function inventory(ctx: SeedContext, made: SeededProject[], seeded: Seeded): Promise<Unit[]> {
  const units: Unit[] = [];
  for (const project of made) {
    for (let i = 0; i < project.units; i++) {
      const model = project.models[i % project.models.length];
      const vertical = model.lot === 0;
      const share = project.models.indexOf(model) / Math.max(1, project.models.length - 1);
      const price = Math.round((project.price.min + (project.price.max - project.price.min) * share * ctx.random.between(0.85, 1)) / 10_000) * 10_000;
      const { id } = await ctx.api.post('/api/crm/inventory', {
        project_id: project.id,
        block: vertical ? `T${1 + (i % 2)}` : String(1 + Math.floor(i / 4)),
        lot: vertical ? `${5 + i * 3}${String.fromCharCode(65 + (i % 4))}` : String(1 + (i % 4) * 2),
        house_model: model.name,
        floor_area: model.floor || null,
        lot_area: model.lot || null,
        price: Math.max(project.price.min, price),
      });
      units.push({ id, project });
    }
  }
  seeded.inventory = units.length;
  return units;
}

type Buyer = Person & { when: Date; interest: string };
/** A seeded lead: when it came, where it stands and whose it is. */
type SeededLead = { id: string; when: Date; status: string; assignee: string | null };

/**
 * Leads over the last weeks, from every source, each worked to its status by a later change (so its history shows
 * who moved it when); most are assigned to the administrator or a sales agent. Answers the converted ones.
 */
async function leads(ctx: SeedContext, made: SeededProject[], sales: string[], seeded: Seeded): Promise<{ converted: Buyer[]; all: SeededLead[] }> {
  const { random } = ctx;
  const taken = new Set<string>();
  const converted: Buyer[] = [];
  const all: SeededLead[] = [];
  for (const when of moments(random, DEMO_SIZE.leads, ctx.historyDays)) {
    const who = person(random, taken);
    const age = (Date.now() - when.getTime()) / DAY;
    // Fresh leads are mostly still new.
    const status = age < 4 && random.chance(0.7) ? 'new' : random.weighted([['new', 20], ['contacted', 25], ['qualified', 20], ['converted', 12], ['lost', 15]] as const);
    const interest = random.chance(0.8) ? random.pick(random.pick(made).interests) : random.pick(GENERAL_INTERESTS);
    const contact = random.weighted([['both', 8], ['email', 1], ['phone', 1]] as const);
    const assignee = random.weighted([[ctx.adminId, 35], [random.pick(sales), 35], [null, status === 'new' ? 30 : 0]] as const);
    const source = random.weighted([['website', 40], ['referral', 20], ['event', 15], ['social', 25]] as const);
    const notes = random.weighted([[random.pick(LEAD_NOTES), 5], [SOURCE_NOTES[source], 3], [null, 2]] as const);
    const { id } = await at(when, () => ctx.api.post('/api/crm/leads', {
      first_name: who.first, last_name: who.last, source, email: contact === 'phone' ? null : who.email, phone: contact === 'email' ? null : who.phone,
      interest, notes, assigned_to: assignee,
    }));
    all.push({ id, when, status, assignee });
    if (status === 'new') continue;
    const worked = later(when, random.between(0.2, Math.min(12, age)));
    await at(worked, () => ctx.api.patch(`/api/crm/leads/${id}`, { status, notes: [notes, STATUS_NOTES[status]].filter(Boolean).join('\n') }));
    if (status === 'converted') converted.push({ ...who, when: worked, interest });
  }
  seeded.leads = DEMO_SIZE.leads;
  return { converted, all };
}

const HOUR = 3600 * 1000;
/** Leads given a story and follow-ups. */
const STORIES = 60;

/**
 * Each lead's story: the calls, e-mails, site visits and notes of the leads staff worked, written when they
 * happened; and follow-ups — for most open leads one to do (some overdue, some today, some later), for some worked ones
 * one already done (it shows on the lead's timeline).
 */
async function stories(ctx: SeedContext, all: SeededLead[], seeded: Seeded) {
  const { random } = ctx;
  let activities = 0;
  let tasks = 0;
  let overdue = 0;
  const write = async (lead: SeededLead, when: Date, body: Record<string, unknown>) => {
    await at(when, () => ctx.api.post(`/api/crm/leads/${lead.id}/activities`, body));
    activities++;
  };
  // The newest leads (those an agent opens first), so the seed stays quick.
  for (const lead of all.slice(-STORIES)) {
    const age = (Date.now() - lead.when.getTime()) / DAY;
    if (lead.status !== 'new') {
      const outcome = lead.status === 'lost' ? random.pick(['no_answer', 'voicemail', 'busy'] as const) : random.weighted([['answered', 6], ['no_answer', 2], ['voicemail', 1]] as const);
      const first = later(lead.when, random.between(0.05, Math.min(2, age)));
      await write(lead, first, { kind: 'call', outcome, body: random.pick(CALL_NOTES[outcome]), occurred_at: first.toISOString() });
      if (lead.status !== 'contacted' && lead.status !== 'lost') await write(lead, later(first, 0.1), { kind: 'email', body: random.pick(EMAIL_NOTES) });
      if (lead.status === 'qualified' || lead.status === 'converted') {
        const visit = later(first, random.between(1, Math.max(1, age - 1)));
        await write(lead, later(first, 0.2), { kind: 'site_visit', occurred_at: visit.toISOString(), place: random.pick(MEETING_PLACES), body: 'Toured the model units.' });
      }
      if (lead.status === 'lost') await write(lead, later(first, random.between(1, 5)), { kind: 'note', body: random.pick(LOST_NOTES) });
    }
    // Open leads mostly have something to do next; a worked one may have had its follow-up done already.
    const open = lead.status === 'new' || lead.status === 'contacted' || lead.status === 'qualified';
    if (open && random.chance(0.6)) {
      const when = random.weighted([['overdue', 3], ['today', 2], ['later', 4]] as const);
      const due = when === 'overdue' ? new Date(Date.now() - random.between(0.2, 4) * DAY)
        : when === 'today' ? new Date(Date.now() + random.between(0.5, 6) * HOUR)
        : new Date(Date.now() + random.between(1, 10) * DAY);
      await ctx.api.post('/api/crm/tasks', {
        title: random.pick(FOLLOW_UPS), due_at: due.toISOString(), lead_id: lead.id, ...(lead.assignee ? { assigned_to: lead.assignee } : {}),
      });
      tasks++;
      if (when === 'overdue') overdue++;
    } else if (lead.status !== 'new' && random.chance(0.3)) {
      const done = later(lead.when, random.between(0.5, Math.min(3, age)));
      const { id } = await at(later(lead.when, 0.1), () => ctx.api.post('/api/crm/tasks', { title: random.pick(FOLLOW_UPS), due_at: done.toISOString(), lead_id: lead.id }));
      await at(done, () => ctx.api.patch(`/api/crm/tasks/${id}`, { done: true }));
      tasks++;
    }
  }
  seeded.activities = activities;
  seeded.tasks = tasks;
  seeded['tasks overdue'] = overdue;
}

/**
 * Reservations of available units by the converted leads (and a few walk-in buyers): some confirmed, some paid and
 * their unit sold, a couple cancelled (their unit back on sale), the rest pending.
 */
async function reservations(ctx: SeedContext, units: Unit[], buyers: Buyer[], seeded: Seeded) {
  const { random } = ctx;
  const onSale = units.filter((u) => u.project.status !== 'on-hold');
  const fates = ['sold', 'sold', 'sold', 'confirmed', 'confirmed', 'confirmed', 'confirmed', 'cancelled', 'cancelled', 'pending', 'pending', 'pending'] as const;
  const taken = new Set(buyers.map((b) => b.email));
  const chosen = random.sample(onSale, Math.min(DEMO_SIZE.reservations, onSale.length));
  for (const [i, unit] of chosen.entries()) {
    const buyer = buyers[i] ?? { ...person(random, taken), when: daysAgo(random.between(1, 20)) };
    const fate = fates[i % fates.length];
    const { id } = await ctx.api.post('/api/crm/reservations', {
      inventory_id: unit.id, client_name: buyer.name, contact_number: buyer.phone, email: buyer.email,
      reservation_date: buyer.when.toISOString(), notes: random.pick(['Reservation fee paid in cash at the site office.', 'Reservation fee paid by bank transfer.', 'Paid online; receipt e-mailed.']),
    });
    if (fate === 'cancelled') await ctx.api.patch(`/api/crm/reservations/${id}`, { status: 'cancelled', notes: 'Bank loan not approved; reservation fee refunded.' });
    if (fate === 'confirmed') await ctx.api.patch(`/api/crm/reservations/${id}`, { status: 'confirmed', payment_status: 'partial' });
    if (fate === 'sold') {
      await ctx.api.patch(`/api/crm/reservations/${id}`, { status: 'confirmed', payment_status: 'paid' });
      await ctx.api.patch('/api/projects/inventory', { inventory_id: unit.id, sold_to: id, status: 'sold' });
    }
    seeded[`reservations ${fate}`] = (seeded[`reservations ${fate}`] ?? 0) + 1;
  }
  seeded.reservations = chosen.length;
}

/** Inquiries sent by visitors through the website's form; the older ones read, answered (e-mailed) or closed by staff. */
async function inquiries(ctx: SeedContext, seeded: Seeded) {
  const { random } = ctx;
  const before = await leadTotal(ctx);
  const taken = new Set<string>();
  const sent = moments(random, DEMO_SIZE.inquiries, Math.min(30, ctx.historyDays));
  for (const [i, when] of sent.entries()) {
    const who = person(random, taken);
    const topic = random.pick(INQUIRY_TOPICS);
    const { id } = await at(when, () => ctx.visitor(i).post('/api/public/inquiries', {
      name: who.name, email: who.email, ...(random.chance(0.7) ? { phone: who.phone } : {}), subject: `${topic.subject}: ${random.pick(topic.projects)}`, message: topic.message,
    }));
    // Oldest first: closed, then responded, then read; the newest stay unread.
    const share = i / sent.length;
    const handled = later(when, random.between(0.05, 2));
    if (share < 0.68) await at(handled, () => ctx.api.patch(`/api/crm/inquiries/${id}`, share < 0.44 ? { response: random.pick(INQUIRY_RESPONSES) } : { status: 'read' }));
    if (share < 0.16) await at(later(handled, 3), () => ctx.api.patch(`/api/crm/inquiries/${id}`, { status: 'closed' }));
  }
  seeded.inquiries = sent.length;
  // Lead flow is on: each inquiry made a lead (routed as the website rule says) or joined the lead of the same person.
  const created = (await leadTotal(ctx)) - before;
  seeded['leads from inquiries'] = created;
  seeded.leads = (seeded.leads ?? 0) + created;
}

const leadTotal = async (ctx: SeedContext) => (await ctx.api.get<{ pagination: { total: number } }>('/api/crm/leads?limit=1')).pagination.total;

/** Visitors subscribing on the website; answers their addresses. */
async function subscribers(ctx: SeedContext, seeded: Seeded): Promise<string[]> {
  const taken = new Set<string>();
  const emails: string[] = [];
  for (let i = 0; i < DEMO_SIZE.subscribers; i++) {
    const who = person(ctx.random, taken);
    await ctx.visitor(100 + i).post('/api/public/newsletter', { email: who.email, ...(ctx.random.chance(0.8) ? { name: who.name } : {}) });
    emails.push(who.email);
  }
  seeded.subscribers = emails.length;
  return emails;
}

type CampaignDetail = { status: string; deliveries: { total: number; sent: number; failed: number; pending: number } };

/** How long the campaign's delivery (the job queue's work) may take before the seed gives up. */
const DELIVERY_TIMEOUT_MS = 180_000;

/**
 * A draft for later, and the open-house campaign sent now to every subscriber: its delivery runs in the job queue
 * (as in the service) and is awaited. Then a few recipients unsubscribe through the link in their e-mail.
 */
async function campaigns(ctx: SeedContext, emails: string[], seeded: Seeded) {
  await ctx.api.post('/api/crm/campaigns', DRAFT_CAMPAIGN);
  const { id } = await ctx.api.post('/api/crm/campaigns', CAMPAIGN);
  await ctx.api.post(`/api/crm/campaigns/${id}/send`);
  const deadline = Date.now() + DELIVERY_TIMEOUT_MS;
  let campaign = await ctx.api.get<CampaignDetail>(`/api/crm/campaigns/${id}`);
  while (campaign.deliveries.total === 0 || campaign.deliveries.pending > 0) {
    if (Date.now() > deadline) throw new Error(`the campaign's delivery did not finish in ${DELIVERY_TIMEOUT_MS / 1000} s (${campaign.deliveries.sent} of ${campaign.deliveries.total} sent)`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    campaign = await ctx.api.get<CampaignDetail>(`/api/crm/campaigns/${id}`);
  }
  seeded.campaigns = 2;
  seeded['campaign deliveries sent'] = campaign.deliveries.sent;
  seeded['campaign deliveries failed'] = campaign.deliveries.failed;
  const leaving = ctx.random.sample(emails, DEMO_SIZE.unsubscribes);
  for (const [i, email] of leaving.entries()) await ctx.visitor(200 + i).get(ctx.unsubscribePath(email));
  seeded.unsubscribed = leaving.length;
}

/** Every kind of record, in the order a company would have made them. */
export async function seedDemo(ctx: SeedContext): Promise<Seeded> {
  const seeded: Seeded = {};
  const sales = await staff(ctx, seeded);
  await cmsContent(ctx, seeded);
  const made = await projects(ctx, seeded);
  const units = await inventory(ctx, made, seeded);
  const { converted: buyers, all } = await leads(ctx, made, sales, seeded);
  await stories(ctx, all, seeded);
  await seedLeadFlow(ctx, all, seeded);
  await reservations(ctx, units, buyers, seeded);
  await inquiries(ctx, seeded);
  const emails = await subscribers(ctx, seeded);
  await campaigns(ctx, emails, seeded);
  return seeded;
}
