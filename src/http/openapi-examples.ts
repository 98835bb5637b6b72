/**
 * Examples for the OpenAPI document, made from the schemas themselves: a schema's own `examples` first, else a value
 * of its type that a person recognises (by field name), within its limits. Every example the document carries is
 * checked against its schema by test/openapi-client.test.ts.
 */

type Json = Record<string, any>;

const UPLOAD = '/uploads/3f9a0c8e1b2d4e5f60718293a4b5c6d7.jpg';

/** Strings by field name. */
const TEXT: Record<string, string> = {
  first_name: 'Maria', last_name: 'Santos', client_name: 'Juan dela Cruz', email: 'maria.santos@example.com',
  phone: '+63 917 555 0123', contact_number: '+63 917 555 0123', title: 'Azure Residences tops off its second tower',
  slug: 'azure-residences', excerpt: 'The second tower is complete; turnover starts in March.',
  content: '## Second tower complete\n\nTurnover of **Tower B** units starts in March.', content_html: '<h2>Second tower complete</h2>\n<p>Turnover of <strong>Tower B</strong> units starts in March.</p>',
  description: 'Resort-inspired condominium near the bay, with a wave pool and a sky garden.', location: 'Parañaque City, Metro Manila',
  message: 'I would like to visit the model unit this Saturday.', subject: 'Site visit', response: 'Thank you! We have booked your visit for Saturday at 10 am.',
  notes: 'Prefers a corner unit on a high floor.', interest: 'Two-bedroom unit', block: 'B', lot: '12', house_model: 'Aria', inventory_code: 'AZR-B-12',
  project_name: 'Azure Residences', category: 'Leisure', caption: 'The lobby', department: 'Sales', currency: 'PHP', distance: '1.2 km',
  seo_title: 'Azure Residences | Condominiums in Parañaque', seo_description: 'Resort-inspired condominiums near the bay.', seo_keywords: 'condominium, parañaque, pre-selling',
  password: 'correct horse battery staple', newPassword: 'correct horse battery staple', currentPassword: 'an older passphrase of mine',
  code: '123456', backupCode: 'A1B2C-3D4E5', totpURI: 'otpauth://totp/PMS:maria.santos%40example.com?secret=JBSWY3DPEHPK3PXP&issuer=PMS',
  token: 'pms_3fa85f6457174562b3fc2c963f66afa6', prefix: 'pms_3fa8', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  user_agent: 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0', ip_address: '203.0.113.7', resource: 'leads', event_type: 'lead.created',
  failure_reason: 'HTTP 503 from the receiver', last_error: 'HTTP 503 from the receiver', error: 'Not found', filename: 'leads.csv', field: 'email',
  url: `https://example.com${UPLOAD}`, path: UPLOAD, image: UPLOAD, image_url: UPLOAD, cover_photo: UPLOAD, cover_image: UPLOAD, icon: UPLOAD,
  srcset: 'https://example.com/uploads/3f9a0c8e1b2d4e5f60718293a4b5c6d7-320.webp 320w, https://example.com/uploads/3f9a0c8e1b2d4e5f60718293a4b5c6d7.jpg 800w',
  nearby_landmarks: 'SM Mall of Asia', tags: 'news', amenities: 'Swimming pool', module: 'crm', stage: 'Tower B', type: 'condominium',
};

/** Fields that mean different things on different records, by the record's schema name (its start: `User…`). */
const BY_OWNER: Record<string, Record<string, string>> = {
  User: { name: 'Maria Santos' }, Inquiry: { name: 'Maria Santos' }, NewsletterSubscription: { name: 'Maria Santos' }, PostPublicNewsletter: { name: 'Maria Santos' }, Department: { name: 'Sales' }, Amenity: { name: 'Swimming pool' }, ApiToken: { name: 'Website integration' },
  Campaign: { name: 'November newsletter', subject: 'New units at Azure Residences' }, Task: { title: 'Call back about the payment terms', notes: 'She asked for a 20% down payment computation.' },
  LeadGroup: { name: 'Tower B sales' }, LeadFlowRule: { name: 'Website leads for Azure Residences' },
  ActionPlan: { name: 'New website lead', title: 'Call now' }, LeadActionPlan: { name: 'New website lead', stop_reason: 'status changed' },
  LeadActivity: { body: 'Called; interested in a two-bedroom unit in Tower B.', place: 'Model unit, Tower B' }, Webhook: { url: 'https://crm.example.com/hooks/property', description: 'New leads to the CRM' },
};
/** Objects that stand for a person: their `name` is a person's. */
const PEOPLE = new Set(['user', 'author', 'assigned_to', 'created_by', 'responded_by']);
const ownText = (owner: string | undefined, field: string) =>
  Object.entries(BY_OWNER).find(([prefix]) => owner?.startsWith(prefix))?.[1][field];

const NUMBERS: Record<string, number> = {
  price: 4_850_000, floor_area: 54.5, lot_area: 120, lat: 14.5176, lng: 121.0509, min: 3_500_000, max: 12_000_000,
  width: 1280, height: 853, bytes: 245_760, line: 2, last_status_code: 200, page: 1, limit: 10, total: 1, totalPages: 1,
};

const FORMATS: Record<string, string> = {
  email: 'maria.santos@example.com', uuid: '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d', 'date-time': '2026-11-23T09:30:00.000Z',
  date: '2026-11-23', 'day-or-instant': '2026-11-01', uri: 'https://example.com/', url: 'https://example.com/',
};

const nonNull = (variants: Json[]) => variants.find((variant) => variant.type !== 'null') ?? variants[0];

/** An example value for `schema`; `schemas` resolves references, `owner` is the named schema a field belongs to. */
export function exampleOf(schema: Json, schemas: Json, owner?: string, field?: string, depth = 0): unknown {
  if (depth > 12) return null;
  const next = (s: Json, f = field, o = owner) => exampleOf(s, schemas, o, f, depth + 1);
  if (schema.$ref) {
    const name = String(schema.$ref).split('/').pop()!;
    const target = schemas[name] as Json | undefined;
    return target?.examples?.[0] ?? (target ? next(target, field, name) : null);
  }
  if (schema.examples?.length) return schema.examples[0];
  if (schema.example !== undefined) return schema.example;
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  if (schema.default !== undefined) return schema.default;
  if (schema.anyOf || schema.oneOf) return next(nonNull(schema.anyOf ?? schema.oneOf));
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const out: Json = {};
      for (const [key, property] of Object.entries<Json>(schema.properties ?? {})) out[key] = next(property, key, field && PEOPLE.has(field) ? 'User' : owner);
      const extra = schema.additionalProperties ?? (schema.patternProperties && Object.values(schema.patternProperties)[0]);
      if (!schema.properties && typeof extra === 'object') out[field === 'details' ? 'email' : 'example'] = next(extra as Json, 'value');
      return out;
    }
    case 'array': return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => next(schema.items ?? {}));
    case 'string': return fit(schema, (field && ownText(owner, field)) || (schema.format && FORMATS[schema.format]) || (field && TEXT[field]) || (field === 'name' ? 'Azure Residences' : 'example'));
    case 'integer': return within(schema, NUMBERS[field ?? ''] ?? 12);
    case 'number': return within(schema, NUMBERS[field ?? ''] ?? 12.5);
    case 'boolean': return true;
    case 'null': return null;
    default: return field ? TEXT[field] ?? null : null;
  }
}

const within = (schema: Json, value: number) => Math.min(schema.maximum ?? Infinity, Math.max(schema.minimum ?? -Infinity, value));

/** A string within the schema's length limits. */
function fit(schema: Json, value: string) {
  let text = value;
  if (schema.minLength && text.length < schema.minLength) text = text.padEnd(schema.minLength, 'x');
  if (schema.maxLength && text.length > schema.maxLength) text = text.slice(0, schema.maxLength);
  return text;
}
