import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { mediaOf, UNSHOWN } from '../src/http/openapi.js';
import { compileBodyValidator } from '../src/http/validation.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

// An OpenAPI document a client can be generated from, and that tells the truth about each route.
let ctx: TestContext;
let doc: any;
let resolved: any;
const METHODS = ['get', 'post', 'patch', 'put', 'delete'];
const operations = () => Object.entries<any>(doc.paths).flatMap(([path, item]) => METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method], full: resolved.paths[path][method] })));
const label = (o: { method: string; path: string }) => `${o.method.toUpperCase()} ${o.path}`;

beforeAll(async () => {
  ctx = await createTestApp();
  const res = await as(ctx, none).get('/api/openapi.json');
  expect(res.statusCode, res.body).toBe(200);
  doc = res.json();
  resolved = await SwaggerParser.dereference(structuredClone(doc));
});
afterAll(async () => {
  await ctx?.close();
});

describe('named schemas and one error body', () => {
  test('every JSON body, asked or answered, is a named component schema', () => {
    for (const o of operations()) {
      for (const [type, media] of mediaOf(o.op)) {
        if (type !== 'application/json') continue;
        expect(String(media.schema?.$ref), `${label(o)} ${type}`).toMatch(/^#\/components\/schemas\/[A-Z]\w+$/);
      }
    }
    for (const name of ['Lead', 'LeadCreate', 'LeadUpdate', 'LeadPage', 'Project', 'ProjectSummary', 'Pagination', 'Error', 'ImageVariants', 'PublicArticle', 'ActivityLog']) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    // A record inside a page is the record's own schema, not a copy.
    expect(doc.components.schemas.LeadPage.properties.data.items).toEqual({ $ref: '#/components/schemas/Lead' });
    expect(doc.components.schemas.Project.properties.cover_photo_variants.anyOf).toContainEqual({ $ref: '#/components/schemas/ImageVariants' });
  });

  test('the error body is defined once; every error answer refers to a shared response', () => {
    const text = JSON.stringify(doc);
    // The body's schema appears once (its field `details` is defined once); examples are values, not definitions.
    expect(text.match(/"details":\{"(type|description|additionalProperties|patternProperties)"/g)).toHaveLength(1);
    for (const o of operations()) {
      for (const [status, response] of Object.entries<any>(o.op.responses)) {
        if (/^[45]/.test(status) && !(o.path.startsWith('/api/health') && status === '503')) {
          expect(response.$ref, `${label(o)} ${status}`).toMatch(/^#\/components\/responses\//);
        }
      }
    }
    expect(doc.components.responses.NotFound.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    // The document grows with the API, not with repetition (shared schemas and responses are referenced, not copied):
    // bounded per operation (2,568 characters each for 180 operations on 2026-11-25), no longer as a whole.
    const perOperation = text.length / operations().length;
    expect(perOperation, `${text.length} characters for ${operations().length} operations`).toBeLessThan(3_000);
  });
});

describe('every operation', () => {
  test('has a unique operationId, a summary, a description and a tag', () => {
    const ids = new Set<string>();
    for (const o of operations()) {
      expect(o.op.operationId, label(o)).toMatch(/^[a-z][A-Za-z0-9]+$/);
      expect(ids.has(o.op.operationId), `${o.op.operationId} twice`).toBe(false);
      ids.add(o.op.operationId);
      expect(o.op.summary, label(o)).toBeTruthy();
      expect(o.op.description?.length, label(o)).toBeGreaterThan(20);
      expect(o.op.tags?.length, label(o)).toBe(1);
      for (const [status, response] of Object.entries<any>(o.full.responses)) expect(response.description, `${label(o)} ${status}`).not.toBe('Default Response');
    }
    expect(ids.size).toBeGreaterThan(140);
    expect(doc.paths['/api/crm/leads'].get.operationId).toBe('listLeads');
    expect(doc.paths['/api/crm/leads/{id}'].patch.operationId).toBe('updateLead');
    expect(doc.paths['/api/crm/leads/export'].get.operationId).toBe('exportLeads');
  });

  test('has an example for each body, and every example is valid against its schema', () => {
    let checked = 0;
    // With the very validator and formats the routes check bodies with.
    const check = (where: string, schema: any, value: unknown) => {
      const validate = compileBodyValidator(structuredClone(schema));
      expect(validate(value), `${where}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(value)}`).toBe(true);
      checked++;
    };
    for (const o of operations()) {
      const fullMedia = [...mediaOf(o.full)];
      [...mediaOf(o.op)].forEach(([type, media], i) => {
        if (UNSHOWN.test(type)) return;
        const schema = fullMedia[i][1].schema;
        const example = media.example ?? (media.examples && Object.values<any>(media.examples)[0]?.value) ?? schema.examples?.[0];
        expect(example, `${label(o)} ${type}: no example`).toBeDefined();
        if (type === 'application/json') check(`${label(o)} ${type}`, schema, example);
        else expect(typeof example, `${label(o)} ${type}`).toBe('string');
      });
    }
    for (const [name, schema] of Object.entries<any>(resolved.components.schemas)) {
      expect(schema.examples?.length, `${name}: no example`).toBeGreaterThan(0);
      check(`components.schemas.${name}`, schema, schema.examples[0]);
    }
    expect(checked).toBeGreaterThan(200);
  });

  test('declares the security its guard really has', async () => {
    const byScheme = (security: any[]) => security.map((s) => Object.keys(s)[0]).sort();
    for (const o of operations()) {
      expect(o.op.security, label(o)).toBeDefined();
      const schemes = byScheme(o.op.security);
      if (/^\/api\/(cms|crm|iam)\//.test(o.path)) expect(schemes, label(o)).toEqual(['apiToken', 'sessionCookie', 'sessionToken']);
      if (o.path.startsWith('/api/public/') || o.path.startsWith('/api/health') || o.path === '/uploads/{name}') {
        expect(schemes, label(o)).toEqual([]);
        expect(Object.keys(o.op.responses), label(o)).not.toContain('401');
        expect(Object.keys(o.op.responses), label(o)).not.toContain('403');
      }
      if (o.path.startsWith('/api/cron/')) expect(schemes, label(o)).toEqual(['cronSecret']);
      if (o.method === 'get') expect(Object.keys(o.op.responses), `${label(o)}: a read conflicts with nothing`).not.toContain('409');
    }
    // Account settings refuse API tokens (documented, and so it is).
    expect(byScheme(doc.paths['/api/auth/change-password'].post.security)).toEqual(['sessionCookie', 'sessionToken']);
    expect(byScheme(doc.paths['/api/auth/session'].get.security)).toEqual(['apiToken', 'sessionCookie', 'sessionToken']);
    expect(doc.paths['/api/auth/login'].post.security).toEqual([]);
    expect(Object.keys(doc.paths['/api/auth/login'].post.responses)).toContain('401');
    expect(doc.components.securitySchemes.cronSecret).toMatchObject({ type: 'http', scheme: 'bearer' });

    const admin = await createUser(ctx, { iam: 'rwd', crm: 'rwd' });
    const created = await as(ctx, admin).post('/api/auth/tokens', { name: 'docs check', permissions: [{ module: 'crm', can_read: true, can_write: false, can_delete: false }] });
    expect(created.statusCode, created.body).toBe(201);
    const token: string = created.json().token;
    expect((await as(ctx, token).get('/api/crm/leads')).statusCode).toBe(200);
    expect((await as(ctx, token).get('/api/auth/session')).statusCode).toBe(200);
    expect((await as(ctx, token).post('/api/auth/change-password', { currentPassword: 'x', newPassword: 'correct horse battery staple' })).statusCode).toBe(403);
  });

  test('an answer\'s example is its own message, as the route really answers', async () => {
    const example = (op: any) => op.responses[Object.keys(op.responses).find((s) => /^2/.test(s))!].content['application/json'].example;
    expect(example(doc.paths['/api/cms/amenities/{id}'].delete)).toEqual({ message: 'Amenity deleted' });
    expect(example(doc.paths['/api/crm/leads/{id}'].patch)).toEqual({ message: 'Lead updated' });
    expect(example(doc.paths['/api/cms/amenities'].post)).toMatchObject({ message: 'Amenity created' });
    expect(example(doc.paths['/api/auth/logout'].post)).toEqual({ message: 'Signed out' });
    // Every answer of the shared `{message}` or `{id, message}` shape gives its own words.
    for (const o of operations()) {
      for (const [status, response] of Object.entries<any>(o.op.responses)) {
        const media = response.content?.['application/json'];
        if (/^2/.test(status) && /\/(Message|Created)$/.test(media?.schema?.$ref ?? '')) expect(media.example?.message, `${label(o)} ${status}`).toBeTruthy();
      }
    }
    const cms = await createUser(ctx, { cms: 'rwd' });
    const created = await as(ctx, cms).post('/api/cms/amenities', { name: 'Sky garden' });
    expect(created.json()).toEqual({ ...example(doc.paths['/api/cms/amenities'].post), id: created.json().id });
    expect((await as(ctx, cms).delete(`/api/cms/amenities/${created.json().id}`)).json()).toEqual(example(doc.paths['/api/cms/amenities/{id}'].delete));
  });

  test('documents content types: CSV exports answer errors in JSON, uploads are images, uploads are taken as multipart', () => {
    const exportLeads = doc.paths['/api/crm/leads/export'].get;
    expect(Object.keys(exportLeads.responses['200'].content)).toEqual(['text/csv']);
    expect(exportLeads.responses['200'].content['text/csv'].example).toMatch(/^id,first_name,last_name,/);
    expect(exportLeads.responses['400']).toEqual({ $ref: '#/components/responses/BadRequest' });
    expect(Object.keys(doc.paths['/uploads/{name}'].get.responses['200'].content)).toEqual(['image/*']);
    expect(Object.keys(doc.paths['/api/uploads'].post.requestBody.content)).toEqual(['multipart/form-data']);
  });
});

describe('headers the document promises are sent', () => {
  test('rate-limit headers on limited operations, and Retry-After on 429', async () => {
    const list = doc.paths['/api/crm/leads'].get;
    expect(Object.keys(list.responses['200'].headers)).toEqual(['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']);
    expect(list['x-rate-limit-bucket']).toBe('read');
    expect(doc.paths['/api/auth/login'].post['x-rate-limit-bucket']).toBe('auth');
    expect(doc.paths['/api/health'].get.responses['200'].headers).toBeUndefined();
    expect(Object.keys(doc.components.responses.TooManyRequests.headers)).toContain('Retry-After');

    const user = await createUser(ctx, { crm: 'r' });
    const res = await as(ctx, user).get('/api/crm/leads');
    for (const header of Object.keys(list.responses['200'].headers)) expect(res.headers[header.toLowerCase()], header).toBeDefined();
    expect((await as(ctx, none).get('/api/health')).headers['x-ratelimit-limit']).toBeUndefined();
  });

  test('ETag and 304 where the route revalidates, and only there', async () => {
    const published = doc.paths['/api/public/projects'].get;
    expect(published.parameters).toContainEqual({ $ref: '#/components/parameters/IfNoneMatch' });
    expect(published.responses['200'].headers.ETag).toEqual({ $ref: '#/components/headers/ETag' });
    expect(published.responses['304']).toEqual({ $ref: '#/components/responses/NotModified' });
    expect(doc.paths['/uploads/{name}'].get.responses['304']).toEqual({ $ref: '#/components/responses/NotModified' });
    expect(doc.paths['/api/crm/leads'].get.responses['304']).toBeUndefined();

    const first = await as(ctx, none).get('/api/public/projects');
    expect(first.headers.etag).toBeTruthy();
    const again = await as(ctx, none, { headers: { 'if-none-match': String(first.headers.etag) } }).get('/api/public/projects');
    expect(again.statusCode).toBe(304);
  });
});

test('openapi-typescript generates a client whose named types a program can use (and misuse is a type error)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'pms-openapi-client-'));
  try {
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(doc)));
    writeFileSync(join(dir, 'program.ts'), `
import type { components, operations, paths } from './api';

type Lead = components['schemas']['Lead'];
type LeadCreate = components['schemas']['LeadCreate'];
type LeadPage = paths['/api/crm/leads']['get']['responses'][200]['content']['application/json'];
type NotFound = paths['/api/crm/leads/{id}']['get']['responses'][404]['content']['application/json'];
type ListLeadsQuery = NonNullable<operations['listLeads']['parameters']['query']>;

export const fullName = (lead: Lead): string => \`\${lead.first_name} \${lead.last_name}\`;
export const names = (page: LeadPage): string[] => page.data.map(fullName);
export const lastPage = (page: LeadPage): number => page.pagination.totalPages;
export const reason = (body: NotFound): string => body.error;
export const isNew = (lead: Lead): boolean => lead.status === 'new';
export const newLead: LeadCreate = { first_name: 'Maria', last_name: 'Santos', email: 'maria.santos@example.com', status: 'new' };
export const query: ListLeadsQuery = { page: 2, limit: 50, sort: 'last_name', order: 'asc' };
export const error: components['schemas']['Error'] = { error: 'Validation error', details: { email: 'must be a valid email' } };
export const variants = (lead: components['schemas']['Project']): number[] => (lead.cover_photo_variants?.variants ?? []).map((v) => v.width);

// @ts-expect-error a status leads do not have
export const archived: LeadCreate = { first_name: 'A', last_name: 'B', status: 'archived' };
// @ts-expect-error first_name is required
export const nameless: LeadCreate = { last_name: 'B' };
// @ts-expect-error leads cannot be sorted by e-mail
export const badSort: ListLeadsQuery = { sort: 'email' };
// @ts-expect-error a lead has no price
export const price = (lead: Lead) => lead.price;
`);
    const program = ts.createProgram([join(dir, 'program.ts')], {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, skipLibCheck: true,
    });
    const problems = ts.getPreEmitDiagnostics(program).map((d) => `${d.file ? `${d.file.fileName.slice(dir.length)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1} ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(problems).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 180_000);
