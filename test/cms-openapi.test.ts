import { afterAll, beforeAll, expect, test } from 'vitest';
import { createTestApp, resolvedOpenapi, type TestContext } from './helpers.js';

let ctx: TestContext;
let doc: any;
beforeAll(async () => {
  ctx = await createTestApp();
  doc = await resolvedOpenapi(ctx);
});
afterAll(async () => {
  await ctx?.close();
});

const EXPECTED = [
  ['get', '/api/cms/projects'], ['post', '/api/cms/projects'], ['get', '/api/cms/projects/{id}'], ['patch', '/api/cms/projects/{id}'],
  ['delete', '/api/cms/projects/{id}'], ['post', '/api/cms/projects/{id}/galleries'], ['delete', '/api/cms/projects/galleries/{id}'],
  ['get', '/api/cms/articles'], ['post', '/api/cms/articles'], ['get', '/api/cms/articles/{id}'], ['patch', '/api/cms/articles/{id}'], ['delete', '/api/cms/articles/{id}'],
  ['get', '/api/cms/careers'], ['post', '/api/cms/careers'], ['get', '/api/cms/careers/{id}'], ['patch', '/api/cms/careers/{id}'], ['delete', '/api/cms/careers/{id}'],
  ['get', '/api/cms/amenities'], ['post', '/api/cms/amenities'], ['get', '/api/cms/amenities/{id}'], ['patch', '/api/cms/amenities/{id}'], ['delete', '/api/cms/amenities/{id}'],
  ['post', '/api/uploads'], ['get', '/uploads/{name}'],
] as const;

const successSchema = (op: any) => {
  const code = Object.keys(op.responses ?? {}).find((c) => /^2/.test(c));
  return code ? op.responses[code].content?.['application/json']?.schema ?? op.responses[code].content?.[Object.keys(op.responses[code].content ?? {})[0]]?.schema : undefined;
};

test('every cms and upload route is documented with its request and response schemas', () => {
  for (const [method, path] of EXPECTED) {
    const op = doc.paths[path]?.[method];
    expect(op, `${method} ${path}`).toBeDefined();
    expect(successSchema(op), `${method} ${path} success schema`).toBeDefined();
    expect(op.responses['400'] ?? op.responses['404'], `${method} ${path} error schema`).toBeDefined();
    if (path.includes('{')) expect(op.parameters?.some((p: any) => p.in === 'path'), `${method} ${path} path parameter`).toBe(true);
    if (method === 'post' || method === 'patch') expect(op.requestBody?.content, `${method} ${path} body`).toBeDefined();
  }
  // Nothing under /api/cms is undocumented.
  for (const [path, ops] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith('/api/cms')) continue;
    for (const [method, op] of Object.entries<any>(ops)) {
      expect(successSchema(op), `${method} ${path}`).toBeDefined();
    }
  }
});

test('list parameters and sortable fields are documented per resource', () => {
  const query = (path: string) => Object.fromEntries(doc.paths[path].get.parameters.filter((p: any) => p.in === 'query').map((p: any) => [p.name, p]));
  const projects = query('/api/cms/projects');
  expect(Object.keys(projects).sort()).toEqual(['created_from', 'created_to', 'limit', 'order', 'page', 'published', 'q', 'sort', 'status', 'type']);
  expect(projects.sort.schema.enum.sort()).toEqual(['created_at', 'name', 'publish_date', 'updated_at']);
  const articles = query('/api/cms/articles');
  expect(Object.keys(articles).sort()).toEqual(['created_from', 'created_to', 'limit', 'order', 'page', 'published', 'q', 'sort', 'tag', 'type']);
  expect(articles.sort.schema.enum.sort()).toEqual(['created_at', 'publish_date', 'title']);
  const careers = query('/api/cms/careers');
  expect(Object.keys(careers).sort()).toEqual(['created_from', 'created_to', 'department', 'employment_type', 'limit', 'order', 'page', 'published', 'q', 'sort']);
  expect(Object.values(projects).every((p: any) => !p.required)).toBe(true);
});

test('the upload body is documented as multipart/form-data with a binary file field', () => {
  const body = doc.paths['/api/uploads'].post.requestBody.content['multipart/form-data'];
  expect(body.schema.properties.file).toMatchObject({ type: 'string', format: 'binary' });
  expect(doc.paths['/api/uploads'].post.responses['413']).toBeDefined();
  expect(doc.paths['/api/uploads'].post.responses['415']).toBeDefined();
});

test('detail schemas carry the detail-only fields, list schemas do not', () => {
  const schemaOf = (path: string) => {
    const s = successSchema(doc.paths[path].get);
    return s.properties.data ? s.properties.data.items : s;
  };
  expect(Object.keys(schemaOf('/api/cms/projects/{id}').properties)).toEqual(expect.arrayContaining(['galleries', 'description', 'coordinates']));
  expect(Object.keys(schemaOf('/api/cms/projects').properties)).not.toContain('galleries');
  expect(Object.keys(schemaOf('/api/cms/articles/{id}').properties)).toContain('content');
  expect(Object.keys(schemaOf('/api/cms/articles').properties)).not.toContain('content');
  expect(Object.keys(schemaOf('/api/cms/careers/{id}').properties)).toContain('description');
  expect(Object.keys(schemaOf('/api/cms/careers').properties)).not.toContain('description');
});
