import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { ConfigError, loadConfig, loadDotEnv } from '../src/config.js';
import { ROOT } from './compiled.js';
import { SERVICE_VARIABLES } from './helpers.js';

// Configuration as src/config.ts reads it; the real start-ups (a service process, `npm start`) are test/start-up.test.ts.

const SECRET = 'a-test-secret-that-is-at-least-32-characters';
const tempDirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'pms-config-'));
  tempDirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
});

/** Runs loadConfig and returns the ConfigError it throws (fails the test if it does not throw one). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig({ AUTH_SECRET: SECRET, DATA_DIR: tempDir(), ...env });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

test('defaults are those of CONTRACT section 1', () => {
  const config = loadConfig({ AUTH_SECRET: SECRET });
  expect(config).toMatchObject({
    nodeEnv: 'development',
    production: false,
    port: 3000,
    host: '0.0.0.0',
    baseUrl: 'http://localhost:3000',
    dataDir: resolve('./data'),
    databaseUrl: undefined,
    redisUrl: undefined,
    cronSecret: undefined,
    smtpUrl: undefined,
    adminEmail: 'admin@example.com',
    adminPassword: undefined,
    trustProxy: false,
    allowedOrigins: [],
    authRateLimit: 5,
    writeRateLimit: 30,
    readRateLimit: 100,
    bcryptCost: 12,
    sessionTtlHours: 168,
    activityLogRetentionDays: 90,
    uploadDir: resolve('./data/uploads'),
    uploadMaxBytes: 10_485_760,
    logLevel: 'info',
  });
  expect(config.mailFrom).toMatch(/@/);
});

test('BASE_URL follows PORT, UPLOAD_DIR follows DATA_DIR, and values are parsed', () => {
  const dataDir = tempDir();
  const config = loadConfig({
    AUTH_SECRET: SECRET,
    PORT: '8080',
    DATA_DIR: dataDir,
    ALLOWED_ORIGINS: 'https://a.example.com, https://b.example.com',
    TRUST_PROXY: 'true',
    ADMIN_EMAIL: 'Boss@Example.COM',
    DATABASE_URL: 'postgres://u:p@db.internal:5432/pms',
    REDIS_URL: 'redis://cache:6379',
    SMTP_URL: 'smtp://user:pass@mail:587',
    BCRYPT_COST: '4',
    LOG_LEVEL: 'debug',
  });
  expect(config.port).toBe(8080);
  expect(config.baseUrl).toBe('http://localhost:8080');
  expect(config.dataDir).toBe(dataDir);
  expect(config.uploadDir).toBe(join(dataDir, 'uploads'));
  expect(config.allowedOrigins).toEqual(['https://a.example.com', 'https://b.example.com']);
  expect(config.trustProxy).toBe(true);
  expect(config.adminEmail).toBe('boss@example.com');
  expect(config.databaseUrl).toBe('postgres://u:p@db.internal:5432/pms');
  expect(config.redisUrl).toBe('redis://cache:6379');
  expect(config.smtpUrl).toBe('smtp://user:pass@mail:587');
  expect(config.bcryptCost).toBe(4);
  expect(config.logLevel).toBe('debug');
  expect(loadConfig({ AUTH_SECRET: SECRET, BASE_URL: 'https://pms.example.com/' }).baseUrl).toBe('https://pms.example.com');
});

test.each([
  ['PORT', 'abc'],
  ['PORT', '70000'],
  ['PORT', '-1'],
  ['DATABASE_URL', 'not a url'],
  ['DATABASE_URL', 'mysql://localhost/db'],
  ['REDIS_URL', 'http://localhost:6379'],
  ['SMTP_URL', 'nope'],
  ['BASE_URL', 'localhost:3000'],
  ['LOG_LEVEL', 'verbose'],
  ['BCRYPT_COST', 'twelve'],
  ['BCRYPT_COST', '3'],
  ['BCRYPT_COST', '40'],
  ['AUTH_RATE_LIMIT', '0'],
  ['WRITE_RATE_LIMIT', '1.5'],
  ['READ_RATE_LIMIT', 'lots'],
  ['SESSION_TTL_HOURS', 'x'],
  ['ACTIVITY_LOG_RETENTION_DAYS', '-5'],
  ['UPLOAD_MAX_BYTES', '10MB'],
  ['ADMIN_EMAIL', 'not-an-email'],
  ['ALLOWED_ORIGINS', 'https://ok.example.com,not an origin'],
  ['AUTH_SECRET', 'too-short'],
  ['UPLOAD_MAX_PIXELS', '0'],
  ['UPLOAD_UNUSED_RETENTION_HOURS', 'week'],
  ['S3_ENDPOINT', 'not a url'],
  ['S3_BUCKET', 'Not_A_Bucket'],
  ['LOG_FORMAT', 'yaml'],
  ['METRICS_TOKEN', 'too-short-for-a-token'],
  ['WORK_HOURS', '18:00-09:00'],
  ['WORK_HOURS', '9-5'],
  ['WORK_HOURS', '09:00-25:00'],
  ['WORK_HOURS', '09:75-17:00'],
  ['WORK_DAYS', '0-4'],
  ['WORK_DAYS', '5-1'],
  ['WORK_DAYS', 'mon-fri'],
  ['WORK_DAYS', '1,,2'],
  ['TRUST_PROXY', '2'],
])('%s=%s stops start-up with a ConfigError naming the variable', (name, value) => {
  const err = configError({ [name]: value });
  expect(err.message).toContain(name);
});

test('working time: 09:00-18:00 Monday to Friday by default; hours and days parse', () => {
  expect(loadConfig({ AUTH_SECRET: SECRET })).toMatchObject({ workHours: { start: 540, end: 1080 }, workDays: [1, 2, 3, 4, 5] });
  expect(loadConfig({ AUTH_SECRET: SECRET, WORK_HOURS: '8:30-24:00', WORK_DAYS: '6, 1-3,7,2' })).toMatchObject({ workHours: { start: 510, end: 1440 }, workDays: [1, 2, 3, 6, 7] });
});

test('uploads: local storage by default; S3 settings parse, and half of them stop start-up', () => {
  const plain = loadConfig({ AUTH_SECRET: SECRET });
  expect(plain).toMatchObject({ s3: undefined, uploadMaxPixels: 100_000_000, uploadUnusedRetentionHours: 168 });
  expect(loadConfig({ AUTH_SECRET: SECRET, S3_BUCKET: 'media', S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY_ID: 'k', S3_SECRET_ACCESS_KEY: 's' }).s3)
    .toEqual({ bucket: 'media', endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true });
  expect(loadConfig({ AUTH_SECRET: SECRET, S3_BUCKET: 'media', S3_REGION: 'eu-west-3' }).s3).toMatchObject({ endpoint: undefined, region: 'eu-west-3', forcePathStyle: false });
  expect(configError({ S3_ENDPOINT: 'http://127.0.0.1:9000' }).message).toContain('S3_BUCKET');
  expect(configError({ S3_BUCKET: 'media', S3_ACCESS_KEY_ID: 'k' }).message).toContain('S3_SECRET_ACCESS_KEY');
});

test('single sign-on by environment: off by default; the issuer needs its client; half of it stops start-up', () => {
  expect(loadConfig({ AUTH_SECRET: SECRET }).ssoOidc).toBeUndefined();
  const client = { SSO_OIDC_CLIENT_ID: 'pms', SSO_OIDC_CLIENT_SECRET: 's3cret' };
  expect(loadConfig({ AUTH_SECRET: SECRET, SSO_OIDC_ISSUER: 'https://accounts.google.com', ...client }).ssoOidc)
    .toEqual({ issuer: 'https://accounts.google.com', clientId: 'pms', clientSecret: 's3cret', name: 'SSO', scopes: 'openid email profile' });
  expect(configError({ SSO_OIDC_ISSUER: 'https://accounts.google.com', SSO_OIDC_CLIENT_ID: 'pms' }).message).toContain('SSO_OIDC_CLIENT_SECRET');
  expect(configError({ SSO_OIDC_CLIENT_ID: 'pms' }).message).toContain('SSO_OIDC_ISSUER');
  expect(configError({ SSO_OIDC_ISSUER: 'not a url', ...client }).message).toContain('SSO_OIDC_ISSUER');
  expect(configError({ SSO_OIDC_ISSUER: 'https://idp.example.com', ...client, SSO_OIDC_SCOPES: 'email profile' }).message).toContain('SSO_OIDC_SCOPES');
  expect(configError({ SSO_OIDC_ISSUER: 'http://idp.example.com', ...client, NODE_ENV: 'production' }).message).toContain('SSO_OIDC_ISSUER');
});

test('AUTH_SECRET is required when NODE_ENV=production', () => {
  const err = (() => {
    try {
      loadConfig({ NODE_ENV: 'production', DATA_DIR: tempDir() });
    } catch (e) {
      return e as Error;
    }
    throw new Error('production start-up without AUTH_SECRET was accepted');
  })();
  expect(err).toBeInstanceOf(ConfigError);
  expect(err.message).toContain('AUTH_SECRET');
  const config = loadConfig({ NODE_ENV: 'production', AUTH_SECRET: SECRET, DATA_DIR: tempDir() });
  expect(config.production).toBe(true);
  expect(config.authSecret).toBe(SECRET);
});

test('in development a secret is generated once and kept in DATA_DIR', () => {
  const dataDir = tempDir();
  const first = loadConfig({ DATA_DIR: dataDir });
  expect(first.authSecret.length).toBeGreaterThanOrEqual(32);
  expect(existsSync(join(dataDir, 'auth-secret'))).toBe(true);
  expect(readFileSync(join(dataDir, 'auth-secret'), 'utf8').trim()).toBe(first.authSecret);
  expect(loadConfig({ DATA_DIR: dataDir }).authSecret).toBe(first.authSecret);
  expect(loadConfig({ DATA_DIR: tempDir() }).authSecret).not.toBe(first.authSecret);
});

// ---------------------------------------------------------------------------------------------------------------
// The real process: `src/main.ts` run by node (compiled as tsx would, see test/compiled.ts).

test('loadDotEnv reads variables from the file, and real environment variables win', () => {
  const file = join(tempDir(), '.env');
  writeFileSync(file, 'PMS_TEST_FROM_FILE=from-file\nPMS_TEST_BOTH=from-file\n');
  process.env.PMS_TEST_BOTH = 'from-environment';
  try {
    loadDotEnv(file);
    expect(process.env.PMS_TEST_FROM_FILE).toBe('from-file');
    expect(process.env.PMS_TEST_BOTH).toBe('from-environment');
    loadDotEnv(join(tempDir(), 'missing.env')); // absent file: nothing happens
  } finally {
    delete process.env.PMS_TEST_FROM_FILE;
    delete process.env.PMS_TEST_BOTH;
  }
});

// The configuration table in docs/operators/configuration.md is checked by test/docs.test.ts.
test('.env.example documents every variable, and the example values parse', () => {
  const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
  for (const name of SERVICE_VARIABLES) expect(example, name).toMatch(new RegExp(`^# ${name}=`, 'm'));
  // Uncommenting every example line that has a value gives a configuration that loads.
  const env: Record<string, string> = { DATA_DIR: tempDir() };
  for (const [, name, value] of example.matchAll(/^# ([A-Z_]+)=(.+)$/gm)) if (name !== 'DATA_DIR' && name !== 'UPLOAD_DIR') env[name] = value;
  expect(Object.keys(env).length).toBeGreaterThan(15);
  const config = loadConfig(env);
  expect(config.port).toBe(3000);
  expect(config.mailFrom).toBe(loadConfig({ AUTH_SECRET: SECRET }).mailFrom);
});
