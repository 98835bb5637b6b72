import { createHash } from 'node:crypto';
import SwaggerParser from '@apidevtools/swagger-parser';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { eq } from 'drizzle-orm';
import { LEAD_STATUSES, leads } from '../src/db/schema/index.js';
import { equals } from '../src/data/filters.js';
import { defineResource } from '../src/data/resource.js';
import { listQuerySchema } from '../src/http/list-query.js';
import { Paginated, StringEnum } from '../src/http/schemas.js';
import { as, createTestApp, none, type TestContext } from './helpers.js';

const spec = defineResource({
  name: 'leads',
  module: 'crm',
  label: 'Lead',
  table: leads,
  id: leads.id,
  view: { fields: { id: leads.id } },
  list: {
    sortable: { created_at: leads.created_at, last_name: leads.last_name },
    defaultSort: 'created_at',
    filters: { status: equals(leads.status, StringEnum(LEAD_STATUSES)) },
    search: [leads.first_name, leads.last_name],
  },
});

let ctx: TestContext;
beforeAll(async () => {
  ctx = await createTestApp({}, {
    // A documented list route built like every resource list: its parameters must appear, all optional.
    register: (app) => {
      app.get('/api/test/leads', {
        schema: { tags: ['test'], security: [], querystring: listQuerySchema(spec), response: { 200: Paginated(Type.Object({ id: Type.String() })) } },
      }, async (request) => app.lists.page(spec, request.query));
    },
  });
});
afterAll(async () => {
  await ctx?.close();
});

test('GET /api/openapi.json is public and a valid OpenAPI 3.1 document generated from the routes', async () => {
  const res = await as(ctx, none).get('/api/openapi.json');
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const doc = res.json();
  expect(doc.openapi).toMatch(/^3\.1\./);
  expect(doc.info.title).toBeTruthy();

  // Throws with the offending path when the document is not valid OpenAPI.
  const validated: any = await SwaggerParser.validate(structuredClone(doc));
  expect(validated.openapi).toBe(doc.openapi);

  // Generated from the route schemas: the health route is there with both of its answers, and public.
  const health = doc.paths['/api/health']?.get;
  expect(health).toBeDefined();
  expect(Object.keys(health.responses).sort()).toEqual(['200', '503']);
  expect(health.security).toEqual([]);
  // The document and the reference page are not themselves API operations.
  expect(doc.paths['/api/openapi.json']).toBeUndefined();
  expect(Object.keys(doc.paths).some((p) => p.startsWith('/api/docs'))).toBe(false);
});

test('list parameters are documented, optional, with their defaults and the sortable fields', async () => {
  const doc = (await as(ctx, none).get('/api/openapi.json')).json();
  const parameters: any[] = doc.paths['/api/test/leads'].get.parameters;
  const byName = Object.fromEntries(parameters.map((p) => [p.name, p]));
  expect(Object.keys(byName).sort()).toEqual(['created_from', 'created_to', 'limit', 'order', 'page', 'q', 'sort', 'status']);
  for (const p of parameters) {
    expect(p.in).toBe('query');
    expect(p.required ?? false, p.name).toBe(false);
  }
  expect(byName.page.schema).toMatchObject({ type: 'integer', minimum: 1, default: 1 });
  expect(byName.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 10 });
  expect(byName.sort.schema).toMatchObject({ enum: ['created_at', 'last_name'], default: 'created_at' });
  expect(byName.order.schema).toMatchObject({ enum: ['asc', 'desc'], default: 'desc' });
  expect(byName.status.schema.enum).toEqual([...LEAD_STATUSES]);
  expect(byName.created_from.schema).toMatchObject({ type: 'string', format: 'day-or-instant' });
  expect(byName.created_to.description ?? byName.created_to.schema.description).toMatch(/YYYY-MM-DD/);
});

test('GET /api/docs serves the interactive reference as HTML, pointing at the document', async () => {
  let url = '/api/docs';
  let res = await as(ctx, none).get(url);
  for (let hops = 0; hops < 3 && res.statusCode >= 300 && res.statusCode < 400; hops++) {
    url = new URL(String(res.headers.location), 'http://localhost').pathname;
    res = await as(ctx, none).get(url);
  }
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/html/);
  expect(res.body).toMatch(/<html/i);
  expect(res.body).toContain('/api/openapi.json');
});

test('the reference page carries a Content-Security-Policy that admits its own scripts, and no others', async () => {
  const res = await as(ctx, none).get('/api/docs/');
  expect(res.statusCode).toBe(200);
  const policy = String(res.headers['content-security-policy'] ?? '');
  const directives = Object.fromEntries(policy.split(';').map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name, values]));
  const scriptSrc: string[] = directives['script-src'];
  expect(scriptSrc).toContain("'self'");
  expect(scriptSrc).not.toContain("'unsafe-inline'");
  expect(scriptSrc).not.toContain("'unsafe-eval'");
  expect(directives['object-src']).toEqual(["'none'"]);
  expect(directives['frame-ancestors']).toEqual(["'self'"]);
  // Every inline script of the page is allowed by its hash (so the page runs); external ones come from this origin.
  const inline = [...res.body.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  expect(inline.length).toBeGreaterThan(1);
  for (const [, attributes, text] of inline) {
    const src = /\bsrc\s*=\s*"([^"]*)"/.exec(attributes)?.[1];
    if (src !== undefined) {
      expect(new URL(src, 'http://localhost:3000/api/docs/').origin).toBe('http://localhost:3000');
      continue;
    }
    expect(text.trim()).not.toBe('');
    expect(scriptSrc).toContain(`'sha256-${createHash('sha256').update(text).digest('base64')}'`);
  }
  // JSON answers are unchanged: no policy there.
  expect((await as(ctx, none).get('/api/openapi.json')).headers['content-security-policy']).toBeUndefined();
});
