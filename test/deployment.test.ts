import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import { parse } from 'yaml';
import { ROOT } from './compiled.js';
import { SERVICE_VARIABLES } from './helpers.js';

// The deployment files as a container runtime would read them (none runs here): compose.yaml, deploy/Caddyfile, the
// Dockerfile's runtime stage and the build context. scripts/check-production.sh performs the image's stages; this
// checks what it cannot: what the files promise an operator.

type Service = {
  build?: string;
  image?: string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }> | string[];
  volumes?: string[];
  ports?: string[];
  healthcheck?: { test: string[] };
};

const compose = parse(readFileSync(join(ROOT, 'compose.yaml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;
const caddyfile = readFileSync(join(ROOT, 'deploy/Caddyfile'), 'utf8');
/** What scripts/production-image.mjs reads from the Dockerfile (the same reading the production check uses). */
const image = (command: string) => execFileSync(process.execPath, [join(ROOT, 'scripts/production-image.mjs'), command], { encoding: 'utf8' });
const nul = (output: string) => output.split('\0').slice(0, -1);
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
const runtimeStage = dockerfile.slice(dockerfile.search(/^FROM .* AS runtime$/m));

test('compose runs two instances of the image alike, on PostgreSQL 15, Redis and the MinIO bucket', () => {
  const { app1, app2, postgres, redis, minio } = services;
  expect(app1 && app2 && postgres && redis && minio).toBeTruthy();
  for (const app of [app1!, app2!]) {
    expect(app.build).toBe('.');
    expect(app.environment).toEqual(app1!.environment);
    expect(app.depends_on).toMatchObject({ postgres: { condition: 'service_healthy' }, redis: { condition: 'service_healthy' }, 'minio-bucket': { condition: 'service_completed_successfully' } });
  }
  expect(app1!.image).toBe(app2!.image);
  // Each instance its own DATA_DIR (the outbox when no SMTP server is set), at the image's VOLUME.
  expect(app1!.volumes).toEqual(['app1-data:/data']);
  expect(app2!.volumes).toEqual(['app2-data:/data']);
  expect(postgres!.image).toMatch(/^postgres:15\b/);

  const env = app1!.environment!;
  expect(env.NODE_ENV).toBe('production');
  expect(env.DATABASE_URL).toMatch(/^postgres:\/\/pms:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\/pms$/);
  expect(env.REDIS_URL).toBe('redis://redis:6379');
  expect(env.AUTH_SECRET).toMatch(/^\$\{AUTH_SECRET:\?/); // required: compose refuses to start without it
  expect(env.BASE_URL).toMatch(/^https:\/\/\$\{DOMAIN:\?/);
  expect(env.S3_ENDPOINT).toBe('http://minio:9000');
  // Addresses, not a hop count (Fastify reads a string as addresses): the client's IP comes from Caddy's header.
  expect(env.TRUST_PROXY).toBe('uniquelocal');
  expect(minio!.healthcheck?.test).toBeDefined();
  // The bucket the instances use is the one the set-up service makes.
  expect(JSON.stringify(services['minio-bucket'])).toContain(`store/${env.S3_BUCKET}`);
  // Every variable given to the service is one it reads (a misspelt name would be silently ignored).
  expect(Object.keys(env).filter((name) => !SERVICE_VARIABLES.includes(name))).toEqual([]);
});

test('Caddy terminates TLS for DOMAIN and balances both instances by their readiness', () => {
  const caddy = services.caddy!;
  expect(caddy.ports).toEqual(expect.arrayContaining(['80:80', '443:443']));
  expect(caddy.volumes).toContain('./deploy/Caddyfile:/etc/caddy/Caddyfile:ro');
  expect(caddy.environment?.DOMAIN).toMatch(/^\$\{DOMAIN:\?/);
  expect(caddyfile).toMatch(/^\{\$DOMAIN\} \{$/m);
  const port = /^\s*PORT=(\d+)/m.exec(runtimeStage)?.[1];
  expect(port).toBe('3000');
  expect(caddyfile).toMatch(new RegExp(`^\\s*reverse_proxy app1:${port} app2:${port} \\{$`, 'm'));
  expect(caddyfile).toMatch(/^\s*health_uri \/api\/health\/ready$/m);
  expect(Object.keys(services).filter((name) => /^app\d$/.test(name)).sort()).toEqual(['app1', 'app2']);
});

test("the image's runtime stage: node as PID 1, not root, a readiness HEALTHCHECK, DATA_DIR on a volume", () => {
  expect(nul(image('cmd'))).toEqual(['node', 'dist/main.js']);
  expect(runtimeStage).not.toMatch(/^ENTRYPOINT/m);
  expect(runtimeStage).toMatch(/^USER node$/m);
  expect(nul(image('healthcheck')).join(' ')).toContain('/api/health/ready');
  expect(image('env').split('\n')).toEqual(expect.arrayContaining(['NODE_ENV=production', 'DATA_DIR=/data']));
  expect(runtimeStage).toMatch(/^VOLUME \/data$/m);
  expect(image('copies').trim().split('\n').sort()).toEqual(['console/dist', 'dist', 'drizzle', 'package-lock.json', 'package.json']);
});

test('the build context holds the sources and none of the local state (node_modules, builds, data, .env, .git)', () => {
  const files = nul(image('context'));
  for (const needed of ['package.json', 'package-lock.json', 'tsconfig.build.json', 'src/main.ts', 'console/index.html', 'console/scripts/build.mjs', 'drizzle/meta/_journal.json']) {
    expect(files).toContain(needed);
  }
  expect(files.filter((file) => /(^|\/)(node_modules|dist|\.git)(\/|$)|^data\/|^\.env$|^test\//.test(file))).toEqual([]);
  expect(files.every((file) => existsSync(join(ROOT, file)))).toBe(true);
});
