import { createSign, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort } from './helpers.js';

/** A person the test identity provider knows, by their login (its account id). */
export type IdpAccount = { email?: string; email_verified?: boolean; name?: string };
export type IdpClient = { client_id: string; client_secret: string; redirect_uris: string[] };

/** The issuer URL of a provider about to start on a free port (clients name the service's callbacks, known first). */
export async function idpIssuer() {
  return `http://127.0.0.1:${await freePort()}`;
}

/**
 * A real OpenID provider (oidc-provider, with its development login and consent pages) on `issuer`'s port: any login
 * signs in as the account of that id.
 */
export async function startIdp(issuer: string, clients: IdpClient[], accounts: Record<string, IdpAccount>) {
  // It warns that Node 20 is not among the versions it is tested on, and that its development pages are in use.
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (!String(args[0]).startsWith('oidc-provider')) warn(...args);
  };
  const { default: Provider } = await import('oidc-provider');
  const provider = new Provider(issuer, {
    clients: clients.map((client) => ({ ...client, grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' })),
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    findAccount: async (_ctx: unknown, sub: string) => (accounts[sub] ? { accountId: sub, claims: async () => ({ sub, ...accounts[sub] }) } : undefined),
    cookies: { keys: ['sso-test-cookie-key-0123456789'] },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600, AuthorizationCode: 60 },
    features: { devInteractions: { enabled: true } },
  } as never);
  const server: Server = (provider as unknown as { listen: (port: number) => Server }).listen(Number(new URL(issuer).port));
  await new Promise<void>((resolve) => (server.listening ? resolve() : server.once('listening', () => resolve())));
  console.warn = warn;
  return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/**
 * Signs in at the identity provider as `login`, from the authorization URL the service redirected to: follows its
 * redirects by hand with its cookies, submits its login and consent forms, and returns the URL it sends the browser
 * back to (on `returnTo`).
 */
export async function signInAtIdp(authorizationUrl: string, login: string, returnTo: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  let body: string | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: body ? 'POST' : 'GET', body, redirect: 'manual',
      headers: { cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
    });
    for (const cookie of res.headers.getSetCookie()) {
      const [pair] = cookie.split(';');
      const [name, ...value] = pair.split('=');
      if (!value.join('=') || /expires=Thu, 01 Jan 1970/i.test(cookie)) jar.delete(name);
      else jar.set(name, value.join('='));
    }
    body = undefined;
    if (res.status >= 300 && res.status < 400) {
      url = new URL(res.headers.get('location')!, url).href;
      if (url.startsWith(returnTo)) return url;
      continue;
    }
    const html = await res.text();
    if (res.status === 200 && /name="prompt" value="login"/.test(html)) body = new URLSearchParams({ prompt: 'login', login, password: 'anything' }).toString();
    else if (res.status === 200 && /name="prompt" value="consent"/.test(html)) body = 'prompt=consent';
    else throw new Error(`the identity provider answered ${res.status}: ${html.slice(0, 500)}`);
  }
  throw new Error('the identity provider never sent the browser back');
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url');

/**
 * A minimal OpenID provider that signs whatever ID token the test asks for (e.g. one for another audience), which a
 * real provider would never issue: discovery, keys, an authorize endpoint that sends the browser straight back, and
 * a token endpoint.
 */
export async function startSigningStub(audience: () => string, email = 'stub-person@example.com') {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'stub', alg: 'RS256', use: 'sig' };
  const codes = new Map<string, { nonce: string }>();
  let issuer = '';
  const sign = (claims: Record<string, unknown>) => {
    const head = base64url(JSON.stringify({ alg: 'RS256', kid: 'stub', typ: 'JWT' }));
    const payload = base64url(JSON.stringify(claims));
    const signature = createSign('RSA-SHA256').update(`${head}.${payload}`).sign(privateKey);
    return `${head}.${payload}.${base64url(signature)}`;
  };
  const server = createServer((req, res) => {
    const url = new URL(req.url!, issuer);
    const json = (value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (url.pathname === '/.well-known/openid-configuration') {
      return json({
        issuer, authorization_endpoint: `${issuer}/authorize`, token_endpoint: `${issuer}/token`, jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'], subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'], token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      });
    }
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(16).toString('hex');
      codes.set(code, { nonce: url.searchParams.get('nonce')! });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state')!);
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token') {
      let text = '';
      req.on('data', (chunk) => (text += chunk));
      req.on('end', () => {
        const found = codes.get(new URLSearchParams(text).get('code') ?? '');
        if (!found) return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
        const now = Math.floor(Date.now() / 1000);
        const idToken = sign({ iss: issuer, sub: 'stub-person', aud: audience(), exp: now + 300, iat: now, nonce: found.nonce, email, email_verified: true });
        json({ access_token: randomBytes(16).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: idToken });
      });
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { issuer, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
