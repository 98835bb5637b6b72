import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { type App, buildApp } from '../src/app.js';
import type { Database } from '../src/db/client.js';
import { createTestDatabase, testConfig } from './helpers.js';

// The service serves the built staff console (console/dist): index.html for client-side routes, hashed assets cached
// for a year, the API and uploads untouched; without a build the API still runs and / says how to build it.

const INDEX = '<!doctype html><title>Console</title><script type="module" src="/assets/index-abc123.js"></script>';
const dirs: string[] = [];
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pms-console-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

async function appWith(consoleDir: string): Promise<{ app: App; database: Database }> {
  const database = await createTestDatabase();
  const app = await buildApp({ config: testConfig({ READ_RATE_LIMIT: '3' }), database, logger: false, jobs: false, consoleDir });
  await app.ready();
  return { app, database };
}

describe('a built console', () => {
  let app: App;
  let database: Database;
  beforeAll(async () => {
    const dir = temp();
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-abc123.js'), 'console.log("console")');
    writeFileSync(join(dir, 'assets', 'index-abc123.js.br'), brotliCompressSync('console.log("console")'));
    ({ app, database } = await appWith(dir));
  });
  afterAll(async () => {
    await app.close();
    await database.close();
  });

  test('client-side routes answer index.html, never cached, whatever their query', async () => {
    for (const url of ['/', '/login', '/reset-password?token=abc%2Bdef&x=1', '/leads/0190f0f0-0000-7000-8000-000000000000/show', '/leads?filter=%7B%22status%22%3A%22new%22%7D']) {
      const res = await app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], url).toBe('no-cache');
      expect(res.body, url).toBe(INDEX);
    }
  });

  test('the page carries a content security policy: own scripts only, API on this origin, no framing', async () => {
    const csp = String((await app.inject({ method: 'GET', url: '/leads' })).headers['content-security-policy']);
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe/);
  });

  test('hashed assets are immutable for a year; a missing one is a 404', async () => {
    const res = await app.inject({ method: 'GET', url: '/assets/index-abc123.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await app.inject({ method: 'GET', url: '/assets/missing-0000.js' })).statusCode).toBe(404);
    // The build's Brotli copy goes to a browser that accepts it.
    const br = await app.inject({ method: 'GET', url: '/assets/index-abc123.js', headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe('console.log("console")');
    expect((await app.inject({ method: 'GET', url: '/favicon.ico' })).statusCode).toBe(404);
  });

  test('loading the console spends none of the read allowance (READ_RATE_LIMIT=3 here)', async () => {
    for (let i = 0; i < 6; i++) {
      const res = await app.inject({ method: 'GET', url: i % 2 ? '/assets/index-abc123.js' : '/dashboard' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-ratelimit-limit']).toBeUndefined();
    }
  });

  test('the API and uploads keep their JSON 404s and their query checks', async () => {
    const api = await app.inject({ method: 'GET', url: '/api/nothing-here' });
    expect(api.statusCode).toBe(404);
    expect(api.json()).toEqual({ error: 'Resource not found', message: 'No route for GET /api/nothing-here' });
    expect((await app.inject({ method: 'GET', url: '/uploads/none.png' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'POST', url: '/leads' })).statusCode).toBe(404);
    const health = await app.inject({ method: 'GET', url: '/api/health?x=1' });
    expect(health.statusCode).toBe(400);
    expect(health.json().details).toHaveProperty('x');
  });

  test('console routes are not in the OpenAPI document', async () => {
    const doc = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((path) => !path.startsWith('/api/'))).toEqual(['/uploads/{name}']);
  });
});

test('without a build the API runs and / answers 503 with a page saying how to build the console', async () => {
  const { app, database } = await appWith(join(temp(), 'never-built'));
  try {
    const page = await app.inject({ method: 'GET', url: '/reset-password?token=abc' });
    expect(page.statusCode).toBe(503);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('npm run build:console');
    expect((await app.inject({ method: 'GET', url: '/api/health' })).statusCode).toBe(200);
  } finally {
    await app.close();
    await database.close();
  }
});
