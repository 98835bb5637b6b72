import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Thrown when an environment variable does not parse; the message names the variable. */
export class ConfigError extends Error {}

export type Config = {
  nodeEnv: string;
  production: boolean;
  port: number;
  host: string;
  baseUrl: string;
  dataDir: string;
  databaseUrl: string | undefined;
  redisUrl: string | undefined;
  authSecret: string;
  /**
   * Secrets AUTH_SECRET had before (AUTH_SECRET_PREVIOUS): two-factor secrets still encrypted with one of them are
   * re-encrypted with AUTH_SECRET at start-up, so a rotation never locks anyone out of two-factor.
   */
  authSecretPrevious: string[];
  cronSecret: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  adminEmail: string;
  adminPassword: string | undefined;
  trustProxy: boolean | string;
  allowedOrigins: string[];
  authRateLimit: number;
  writeRateLimit: number;
  readRateLimit: number;
  /** A list page slower than this to read (ms) is kept and served again while the change log allows. */
  slowPageMs: number;
  bcryptCost: number;
  sessionTtlHours: number;
  activityLogRetentionDays: number;
  /** Deleted cms and crm records stay restorable (in the trash) this many days, then a daily job purges them. */
  trashRetentionDays: number;
  /**
   * Leads lost, or untouched (no change, no activity), for this many months are anonymised by a daily job (the privacy
   * erase); undefined: never.
   */
  personalDataRetentionMonths: number | undefined;
  uploadDir: string;
  uploadMaxBytes: number;
  /** Images with more pixels than this are refused (decompression bombs). */
  uploadMaxPixels: number;
  /** An upload referenced by nothing for this long is removed by the cleanup job. */
  uploadUnusedRetentionHours: number;
  /** S3-compatible object storage for uploads; undefined: the local UPLOAD_DIR. */
  s3: S3Config | undefined;
  /** Largest CSV file an import accepts. */
  importMaxBytes: number;
  logLevel: string;
  /** `pretty` (human-readable, pino-pretty) or `json` (one object a line): LOG_FORMAT, else pretty on a terminal. */
  logFormat: 'json' | 'pretty';
  /** Bearer token that opens `GET /api/metrics`; unset: no metrics endpoint and no metrics collected. */
  metricsToken: string | undefined;
  /** Who hears of a new public inquiry: every user with crm write, nobody, or these addresses. */
  inquiryNoticeTo: 'crm-writers' | 'none' | string[];
  /** A lead assigned to someone (by someone else) e-mails the assignee. */
  assignmentNotices: boolean;
  /** Seconds to wait before each retry of a failed webhook delivery (after the first attempt); then it fails. */
  webhookRetrySchedule: number[];
  /** How long one webhook POST may take (ms) before it counts as failed. */
  webhookTimeoutMs: number;
  /** In production, webhook URLs may point at loopback, private or link-local addresses only when true. */
  webhookAllowPrivate: boolean;
  /** Delivered and failed webhook deliveries older than this many days are purged daily. */
  webhookDeliveryRetentionDays: number;
  /** The time zone of follow-ups' "today" and of the morning e-mail (an IANA name). */
  taskTimeZone: string;
  /** The local hour (0–23, in `taskTimeZone`) the morning e-mail of follow-ups goes out. */
  taskDigestHour: number;
  /** Cron expression (UTC) of the service's own backups; undefined: none scheduled. */
  backupSchedule: string | undefined;
  /** Where scheduled backups (and `npm run admin -- backup` without --out) are written. */
  backupDir: string;
  /** How many scheduled backups are kept; older ones are deleted after each new one. */
  backupKeep: number;
  /** Working hours (minutes after local midnight in `taskTimeZone`, start before end): action plans' and speed to lead's clock. */
  workHours: { start: number; end: number };
  /** Working days, ISO weekdays (Monday 1 … Sunday 7), ascending. */
  workDays: number[];
  /** Live streams (`GET /api/live`) one user may hold open on one instance; one more closes their oldest. */
  liveStreamsPerUser: number;
  /** The identity provider staff may sign in with, set by environment (SSO_OIDC_*); administrators may add more in iam. */
  ssoOidc: SsoOidcConfig | undefined;
  /** A public newsletter sign-up is subscribed only once its e-mailed link is followed (off: at once). */
  newsletterDoubleOptIn: boolean;
  /** The page the confirmation link opens (the token is appended as `token`); undefined: the service's own page. */
  newsletterConfirmUrl: string | undefined;
  /** The consent wording kept with a public sign-up when the website sends none of its own. */
  newsletterConsentText: string;
  /** The public forms require a form token (`GET /api/public/form-token`); off: a missing one is let through. */
  publicFormToken: boolean;
  /** A form token is accepted only this many seconds after it was issued (people take longer than bots to fill a form). */
  formTokenMinSeconds: number;
  /** CAPTCHA checked on the public forms; undefined: none. */
  captcha: CaptchaConfig | undefined;
};

export const CAPTCHA_PROVIDERS = ['turnstile', 'hcaptcha'] as const;
export type CaptchaConfig = { provider: (typeof CAPTCHA_PROVIDERS)[number]; secret: string; verifyUrl: string };

/** The providers' own siteverify endpoints. */
export const CAPTCHA_VERIFY_URLS: Record<CaptchaConfig['provider'], string> = {
  turnstile: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
  hcaptcha: 'https://api.hcaptcha.com/siteverify',
};

export type SsoOidcConfig = { issuer: string; clientId: string; clientSecret: string; name: string; scopes: string };

export type S3Config = {
  /** Undefined: AWS's own endpoint for the region. */
  endpoint: string | undefined;
  bucket: string;
  region: string;
  /** Undefined: the AWS SDK's default credential chain (instance role, shared files…). */
  accessKeyId: string | undefined;
  secretAccessKey: string | undefined;
  /** `https://endpoint/bucket/key` instead of `https://bucket.endpoint/key` (MinIO and most self-hosted servers). */
  forcePathStyle: boolean;
};

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL (${protocols.join(', ')}), got "${raw}"`);
  }
  if (!protocols.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(`${name} must use one of ${protocols.join(', ')}, got "${parsed.protocol}"`);
  }
  return raw;
}

function inquiryNoticeTo(env: Env): Config['inquiryNoticeTo'] {
  const raw = env.INQUIRY_NOTICE_TO?.trim() || 'crm-writers';
  if (raw === 'crm-writers' || raw === 'none') return raw;
  const addresses = raw.split(',').map((a) => a.trim().toLowerCase()).filter(Boolean);
  const bad = addresses.find((a) => !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(a));
  if (bad || !addresses.length) throw new ConfigError(`INQUIRY_NOTICE_TO must be crm-writers, none or a comma-separated list of e-mail addresses, got "${bad ?? raw}"`);
  return addresses;
}

function flag(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (!raw) return fallback;
  if (['true', '1', 'yes', 'on'].includes(raw)) return true;
  if (['false', '0', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}"`);
}

function email(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  if (!/^[^\s@]+@[^\s@]+$/.test(raw)) throw new ConfigError(`${name} must be an e-mail address, got "${raw}"`);
  return raw.toLowerCase();
}

/** Standard Webhooks' schedule: retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (over 27 h in all). */
export const DEFAULT_WEBHOOK_RETRY_SCHEDULE = [5, 300, 1800, 7200, 18000, 36000, 36000];

/** A comma-separated list of seconds, to the millisecond (each 0–7 days, at most 50 of them; empty: no retry). */
function secondsList(env: Env, name: string, fallback: number[]): number[] {
  const raw = env[name]?.trim();
  if (raw === undefined) return fallback;
  if (raw === '') return [];
  const items = raw.split(',').map((item) => item.trim());
  if (items.length > 50 || items.some((item) => !/^\d{1,6}(\.\d{1,3})?$/.test(item) || Number(item) > 7 * 24 * 3600)) {
    throw new ConfigError(`${name} must be a comma-separated list of at most 50 numbers of seconds (e.g. 5 or 0.5, to the millisecond), each at most 604800, got "${raw}"`);
  }
  return items.map(Number);
}

/** Development secret: generated once and kept in DATA_DIR so sessions survive restarts. */
function developmentSecret(dataDir: string): string {
  const file = join(dataDir, 'auth-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/** S3 settings: S3_BUCKET turns object storage on; the keys come as a pair. */
function s3Of(env: Env): S3Config | undefined {
  const bucket = env.S3_BUCKET?.trim();
  const endpoint = url(env, 'S3_ENDPOINT', ['http', 'https']);
  const accessKeyId = env.S3_ACCESS_KEY_ID?.trim() || undefined;
  const secretAccessKey = env.S3_SECRET_ACCESS_KEY?.trim() || undefined;
  if (!bucket) {
    const stray = ['S3_ENDPOINT', 'S3_ACCESS_KEY_ID', 'S3_SECRET_ACCESS_KEY'].find((name) => env[name]?.trim());
    if (stray) throw new ConfigError(`S3_BUCKET is required when ${stray} is set`);
    return undefined;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError(`S3_BUCKET must be a bucket name (3–63 lower-case letters, digits, dots, hyphens), got "${bucket}"`);
  if (!accessKeyId !== !secretAccessKey) throw new ConfigError('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY must be set together');
  const region = env.S3_REGION?.trim() || 'us-east-1';
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new ConfigError(`S3_REGION must be a region name such as us-east-1, got "${region}"`);
  return { endpoint, bucket, region, accessKeyId, secretAccessKey, forcePathStyle: flag(env, 'S3_FORCE_PATH_STYLE', endpoint !== undefined) };
}

/** SSO_OIDC_ISSUER turns the environment's identity provider on; its client id and secret come with it. */
function ssoOidcOf(env: Env, production: boolean): SsoOidcConfig | undefined {
  const issuer = url(env, 'SSO_OIDC_ISSUER', production ? ['https'] : ['http', 'https']);
  const clientId = env.SSO_OIDC_CLIENT_ID?.trim() || undefined;
  const clientSecret = env.SSO_OIDC_CLIENT_SECRET?.trim() || undefined;
  const name = env.SSO_OIDC_NAME?.trim() || 'SSO';
  const scopes = env.SSO_OIDC_SCOPES?.trim() || 'openid email profile';
  if (!issuer) {
    const stray = ['SSO_OIDC_CLIENT_ID', 'SSO_OIDC_CLIENT_SECRET', 'SSO_OIDC_NAME', 'SSO_OIDC_SCOPES'].find((n) => env[n]?.trim());
    if (stray) throw new ConfigError(`SSO_OIDC_ISSUER is required when ${stray} is set`);
    return undefined;
  }
  if (!clientId || !clientSecret) throw new ConfigError('SSO_OIDC_CLIENT_ID and SSO_OIDC_CLIENT_SECRET are required when SSO_OIDC_ISSUER is set');
  if (name.length > 100) throw new ConfigError('SSO_OIDC_NAME must be at most 100 characters');
  if (!scopes.split(/\s+/).includes('openid')) throw new ConfigError(`SSO_OIDC_SCOPES must include openid, got "${scopes}"`);
  return { issuer, clientId, clientSecret, name, scopes };
}

/** CAPTCHA_PROVIDER turns the check on; CAPTCHA_SECRET is then required, CAPTCHA_VERIFY_URL optional. */
function captchaOf(env: Env): CaptchaConfig | undefined {
  const provider = env.CAPTCHA_PROVIDER?.trim().toLowerCase();
  const secret = env.CAPTCHA_SECRET?.trim();
  const verifyUrl = url(env, 'CAPTCHA_VERIFY_URL', ['http', 'https']);
  if (!provider) {
    const stray = ['CAPTCHA_SECRET', 'CAPTCHA_VERIFY_URL'].find((name) => env[name]?.trim());
    if (stray) throw new ConfigError(`CAPTCHA_PROVIDER (turnstile or hcaptcha) is required when ${stray} is set`);
    return undefined;
  }
  if (!(CAPTCHA_PROVIDERS as readonly string[]).includes(provider)) throw new ConfigError(`CAPTCHA_PROVIDER must be turnstile or hcaptcha, got "${env.CAPTCHA_PROVIDER}"`);
  if (!secret) throw new ConfigError('CAPTCHA_SECRET (the secret key from the CAPTCHA provider) is required when CAPTCHA_PROVIDER is set');
  const chosen = provider as CaptchaConfig['provider'];
  return { provider: chosen, secret, verifyUrl: verifyUrl ?? CAPTCHA_VERIFY_URLS[chosen] };
}

/** Text of at most `max` characters (trimmed); unset or empty: `fallback`. */
function text(env: Env, name: string, fallback: string, max: number): string {
  const raw = env[name]?.trim() || fallback;
  if (raw.length > max) throw new ConfigError(`${name} must be at most ${max} characters long, got ${raw.length}`);
  return raw;
}

/** Reads `.env` from the working directory (real environment variables win). */
export function loadDotEnv(file = resolve('.env')): void {
  if (existsSync(file)) process.loadEnvFile(file);
}

/** A token that opens a protected endpoint: unset, or at least 32 characters (CONTRACT §13 for CRON_SECRET). */
function secretToken(env: Env, name: string): string | undefined {
  const secret = env[name]?.trim() || undefined;
  if (secret !== undefined && secret.length < 32) throw new ConfigError(`${name} must be at least 32 characters long (got ${secret.length}); generate one with: openssl rand -hex 32`);
  return secret;
}

/** `HH:MM-HH:MM` (24-hour, start before end): the working hours of a day, as minutes after midnight. */
function workHours(env: Env): Config['workHours'] {
  const raw = env.WORK_HOURS?.trim() || '09:00-18:00';
  const match = /^(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})$/.exec(raw);
  const minutes = (h: string, m: string) => (Number(h) <= 24 && Number(m) < 60 ? Number(h) * 60 + Number(m) : NaN);
  const start = match ? minutes(match[1], match[2]) : NaN;
  const end = match ? minutes(match[3], match[4]) : NaN;
  if (!(start < end && end <= 24 * 60)) throw new ConfigError(`WORK_HOURS must be a start and an end time such as 09:00-18:00 (24-hour, start before end), got "${raw}"`);
  return { start, end };
}

/** ISO weekdays (Monday 1 … Sunday 7) as a list and ranges: `1-5`, `1-5,7`, `1,3,5`. */
function workDays(env: Env): number[] {
  const raw = env.WORK_DAYS?.trim() || '1-5';
  const days = new Set<number>();
  for (const part of raw.split(',').map((p) => p.trim())) {
    const match = /^([1-7])(?:-([1-7]))?$/.exec(part);
    if (!match || (match[2] && Number(match[2]) < Number(match[1]))) {
      throw new ConfigError(`WORK_DAYS must be ISO weekdays (Monday 1 … Sunday 7) as a list or ranges such as 1-5 or 1-5,7, got "${raw}"`);
    }
    for (let day = Number(match[1]); day <= Number(match[2] ?? match[1]); day++) days.add(day);
  }
  return [...days].sort((a, b) => a - b);
}

/** An IANA time zone name the runtime knows (`Asia/Manila`, `UTC`). */
function timeZone(env: Env, name: string, fallback: string): string {
  const raw = env[name]?.trim() || fallback;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: raw }).resolvedOptions().timeZone;
  } catch {
    throw new ConfigError(`${name} must be an IANA time zone such as Asia/Manila or UTC, got "${raw}"`);
  }
}

/**
 * A cron expression as pg-boss reads it: five fields (minute hour day month weekday), or six with seconds first;
 * numbers, `*`, ranges, steps, lists and month or day names. pg-boss would otherwise fail only when it schedules.
 */
function cron(env: Env, name: string): string | undefined {
  const raw = env[name]?.trim().replace(/\s+/g, ' ');
  if (!raw) return undefined;
  const fields = raw.split(' ');
  if (fields.length < 5 || fields.length > 6 || fields.some((field) => !/^[0-9a-z*?/,-]+$/i.test(field))) {
    throw new ConfigError(`${name} must be a cron expression of five fields (minute hour day month weekday, in UTC) such as "30 2 * * *", got "${env[name]}"`);
  }
  return raw;
}

export const DEFAULT_CONSENT_TEXT = 'Yes, send me the newsletter by e-mail. I can unsubscribe at any time with the link in every newsletter.';

const LOG_FORMATS = ['json', 'pretty'] as const;

/** LOG_FORMAT when set; otherwise pretty only when stdout is a terminal (piped, in containers and in tests: JSON). */
function logFormat(env: Env, stdoutIsTTY: boolean): Config['logFormat'] {
  const raw = env.LOG_FORMAT?.trim().toLowerCase();
  if (!raw) return stdoutIsTTY ? 'pretty' : 'json';
  if (!(LOG_FORMATS as readonly string[]).includes(raw)) throw new ConfigError(`LOG_FORMAT must be json or pretty, got "${env.LOG_FORMAT}"`);
  return raw as Config['logFormat'];
}

/**
 * The only reader of the environment: typed, validated; a bad value throws a ConfigError naming the variable.
 * `terminal.stdoutIsTTY`: whether the process writes its logs to a terminal (main.ts passes `process.stdout.isTTY`);
 * false by default, so a configuration built anywhere else logs JSON unless LOG_FORMAT says otherwise.
 */
export function loadConfig(env: Env = process.env, terminal: { stdoutIsTTY?: boolean } = {}): Config {
  const nodeEnv = env.NODE_ENV?.trim() || 'development';
  const production = nodeEnv === 'production';
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST?.trim() || '0.0.0.0';
  const baseUrl = (url(env, 'BASE_URL', ['http', 'https']) ?? `http://localhost:${port}`).replace(/\/+$/, '');
  const dataDir = resolve(env.DATA_DIR?.trim() || './data');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres', 'postgresql']);
  const redisUrl = url(env, 'REDIS_URL', ['redis', 'rediss']);
  const smtpUrl = url(env, 'SMTP_URL', ['smtp', 'smtps']);

  let authSecret = env.AUTH_SECRET?.trim();
  if (authSecret !== undefined && authSecret.length > 0 && authSecret.length < 32) {
    throw new ConfigError('AUTH_SECRET must be at least 32 characters long');
  }
  if (!authSecret) {
    if (production) throw new ConfigError('AUTH_SECRET is required when NODE_ENV=production');
    authSecret = developmentSecret(dataDir);
  }

  const authSecretPrevious = (env.AUTH_SECRET_PREVIOUS ?? '').split(',').map((s) => s.trim()).filter((s) => s && s !== authSecret);
  if (authSecretPrevious.some((s) => s.length < 32)) throw new ConfigError('AUTH_SECRET_PREVIOUS must be a comma-separated list of former AUTH_SECRET values, each at least 32 characters long');

  const logLevel = env.LOG_LEVEL?.trim() || 'info';
  if (!LOG_LEVELS.includes(logLevel)) throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);

  const trustProxyRaw = env.TRUST_PROXY?.trim();
  let trustProxy: boolean | string = false;
  if (trustProxyRaw && !['false', '0', 'no'].includes(trustProxyRaw.toLowerCase())) {
    trustProxy = ['true', '1', 'yes'].includes(trustProxyRaw.toLowerCase()) ? true : trustProxyRaw;
    // A hop count would be taken for an address (2 → 0.0.0.2): every client would share the proxy's IP and its limits.
    if (/^\d+$/.test(trustProxyRaw) && trustProxy !== true) {
      throw new ConfigError(`TRUST_PROXY takes true or the proxies' addresses (e.g. uniquelocal, 10.0.0.0/8), not a hop count, got "${trustProxyRaw}"`);
    }
  }

  const origins = (env.ALLOWED_ORIGINS ?? '').split(',').map((o) => o.trim()).filter(Boolean);
  for (const origin of origins) {
    try {
      new URL(origin);
    } catch {
      throw new ConfigError(`ALLOWED_ORIGINS must be a comma-separated list of origins, got "${origin}"`);
    }
  }

  return {
    nodeEnv,
    production,
    port,
    host,
    baseUrl,
    dataDir,
    databaseUrl,
    redisUrl,
    authSecret,
    authSecretPrevious,
    cronSecret: secretToken(env, 'CRON_SECRET'),
    smtpUrl,
    mailFrom: env.MAIL_FROM?.trim() || 'Property Management <no-reply@localhost>',
    adminEmail: email(env, 'ADMIN_EMAIL', 'admin@example.com'),
    adminPassword: env.ADMIN_PASSWORD || undefined,
    trustProxy,
    allowedOrigins: origins,
    authRateLimit: integer(env, 'AUTH_RATE_LIMIT', 5, 1, 1_000_000),
    writeRateLimit: integer(env, 'WRITE_RATE_LIMIT', 30, 1, 1_000_000),
    readRateLimit: integer(env, 'READ_RATE_LIMIT', 100, 1, 1_000_000),
    slowPageMs: integer(env, 'SLOW_PAGE_MS', 0, 0, 60_000), // 0: every page kept (src/data/page-cache.ts says why)
    bcryptCost: integer(env, 'BCRYPT_COST', 12, 4, 16),
    sessionTtlHours: integer(env, 'SESSION_TTL_HOURS', 168, 1, 24 * 366),
    activityLogRetentionDays: integer(env, 'ACTIVITY_LOG_RETENTION_DAYS', 90, 1, 36500),
    trashRetentionDays: integer(env, 'TRASH_RETENTION_DAYS', 30, 1, 36500),
    personalDataRetentionMonths: integer(env, 'PERSONAL_DATA_RETENTION_MONTHS', 0, 0, 1200) || undefined,
    uploadDir: resolve(env.UPLOAD_DIR?.trim() || join(dataDir, 'uploads')),
    uploadMaxBytes: integer(env, 'UPLOAD_MAX_BYTES', 10 * 1024 * 1024, 1, 2 ** 40),
    uploadMaxPixels: integer(env, 'UPLOAD_MAX_PIXELS', 100_000_000, 1, 2 ** 31),
    uploadUnusedRetentionHours: integer(env, 'UPLOAD_UNUSED_RETENTION_HOURS', 24 * 7, 1, 24 * 366 * 10),
    s3: s3Of(env),
    // A JavaScript string holds at most 2^29 characters: a file larger than half of that could not be read as text.
    importMaxBytes: integer(env, 'IMPORT_MAX_BYTES', 50 * 1024 * 1024, 1, 256 * 1024 * 1024),
    logLevel,
    logFormat: logFormat(env, terminal.stdoutIsTTY === true),
    metricsToken: secretToken(env, 'METRICS_TOKEN'),
    inquiryNoticeTo: inquiryNoticeTo(env),
    assignmentNotices: flag(env, 'ASSIGNMENT_NOTICES', true),
    webhookRetrySchedule: secondsList(env, 'WEBHOOK_RETRY_SCHEDULE', DEFAULT_WEBHOOK_RETRY_SCHEDULE),
    webhookTimeoutMs: integer(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookAllowPrivate: flag(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    webhookDeliveryRetentionDays: integer(env, 'WEBHOOK_DELIVERY_RETENTION_DAYS', 30, 1, 36500),
    taskTimeZone: timeZone(env, 'TASK_TIME_ZONE', 'Asia/Manila'),
    taskDigestHour: integer(env, 'TASK_DIGEST_HOUR', 8, 0, 23),
    backupSchedule: cron(env, 'BACKUP_SCHEDULE'),
    backupDir: resolve(env.BACKUP_DIR?.trim() || join(dataDir, 'backups')),
    backupKeep: integer(env, 'BACKUP_KEEP', 7, 1, 10_000),
    workHours: workHours(env),
    workDays: workDays(env),
    liveStreamsPerUser: integer(env, 'LIVE_STREAMS_PER_USER', 5, 1, 100),
    ssoOidc: ssoOidcOf(env, production),
    newsletterDoubleOptIn: flag(env, 'NEWSLETTER_DOUBLE_OPT_IN', true),
    newsletterConfirmUrl: url(env, 'NEWSLETTER_CONFIRM_URL', ['http', 'https']),
    newsletterConsentText: text(env, 'NEWSLETTER_CONSENT_TEXT', DEFAULT_CONSENT_TEXT, 2000),
    publicFormToken: flag(env, 'PUBLIC_FORM_TOKEN', true),
    formTokenMinSeconds: integer(env, 'FORM_TOKEN_MIN_SECONDS', 3, 0, 3600),
    captcha: captchaOf(env),
  };
}
