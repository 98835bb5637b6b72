import { readdirSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

const LIMIT = 1024;
let ctx: TestContext;
let cms: Awaited<ReturnType<typeof createUser>>;
let crm: Awaited<ReturnType<typeof createUser>>;
let readOnly: Awaited<ReturnType<typeof createUser>>;
let iamOnly: Awaited<ReturnType<typeof createUser>>;

beforeAll(async () => {
  ctx = await createTestApp({ UPLOAD_MAX_BYTES: String(LIMIT), BASE_URL: 'https://cdn.example.com' });
  cms = await createUser(ctx, { cms: 'w' });
  crm = await createUser(ctx, { crm: 'rw' });
  readOnly = await createUser(ctx, { cms: 'rd', crm: 'rd' });
  iamOnly = await createUser(ctx, { iam: 'rwd' });
});
afterAll(async () => {
  await ctx?.close();
});

// Minimal files that file-type recognises from their bytes.
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
// Real JPEG, WebP and AVIF images (1×1): every upload is decoded and re-encoded, so a file must really be one.
const pixel = () => sharp({ create: { width: 1, height: 1, channels: 3, background: { r: 10, g: 200, b: 30 } } });
const JPEG = await pixel().jpeg().toBuffer();
const WEBP = await pixel().webp().toBuffer();
const AVIF = await pixel().avif().toBuffer();
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

const BOUNDARY = '----pms-test-boundary-7d1f';
function multipart(content: Buffer, filename = 'image.bin', field = 'file', contentType = 'application/octet-stream') {
  return Buffer.concat([
    Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: ${contentType}\r\n\r\n`),
    content,
    Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
  ]);
}

const upload = (content: Buffer, headers: Record<string, string>, filename?: string, field?: string, contentType?: string) =>
  as(ctx, none, { headers: { ...headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/uploads', multipart(content, filename, field, contentType));

const stored = () => readdirSync(ctx.config.uploadDir);

describe('uploads', () => {
  test.each([
    ['PNG', PNG, 'png', 'image/png'],
    ['JPEG', JPEG, 'jpg', 'image/jpeg'],
    ['WebP', WEBP, 'webp', 'image/webp'],
    ['GIF', GIF, 'gif', 'image/gif'],
    ['AVIF', AVIF, 'avif', 'image/avif'],
  ])('%s is stored under a random name and served back, re-encoded in its own type, with nosniff', async (_label, bytes, ext, type) => {
    const res = await upload(bytes, cms.headers, 'holiday photo.txt');
    expect(res.statusCode, res.body).toBe(201);
    const { path, url } = res.json();
    expect(path).toMatch(new RegExp(`^/uploads/[a-f0-9]{32}\\.${ext}$`));
    expect(url).toBe(`https://cdn.example.com${path}`);
    expect(path).not.toContain('holiday');

    const served = await as(ctx, none).get(path);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe(type);
    expect(served.headers['x-content-type-options']).toBe('nosniff');
    const meta = await sharp(served.rawPayload).metadata();
    expect(meta).toMatchObject({ width: 1, height: 1, format: ext === 'jpg' ? 'jpeg' : ext === 'avif' ? 'heif' : ext });
    expect(res.json()).toMatchObject({ width: 1, height: 1, variants: [], type });
  });

  test('a crm writer may upload too', async () => {
    expect((await upload(PNG, crm.headers)).statusCode).toBe(201);
  });

  test('text named x.png, an SVG and an empty file are 415, and leave no file behind', async () => {
    const before = stored().length;
    for (const [content, name, type] of [
      [Buffer.from('hello, I am not an image at all'), 'x.png', 'image/png'],
      [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'x.svg', 'image/svg+xml'],
      [Buffer.from('%PDF-1.4\n%âãÏÓ\n'), 'x.jpg', 'image/jpeg'],
      [Buffer.alloc(0), 'empty.png', 'image/png'],
    ] as const) {
      const res = await upload(content as Buffer, cms.headers, name, 'file', type);
      expect(res.statusCode, `${name}: ${res.body}`).toBe(415);
      expect(res.json()).toEqual({ error: 'Unsupported media type', message: expect.any(String) });
    }
    expect(stored().length).toBe(before);
  });

  test('over UPLOAD_MAX_BYTES → 413 (valid image head, 64 KB), no partial file kept; at the limit → 201', async () => {
    const before = stored().length;
    const big = Buffer.concat([PNG, Buffer.alloc(64 * 1024)]);
    const res = await upload(big, cms.headers);
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'Payload too large', message: expect.any(String) });
    const justOver = await upload(Buffer.concat([PNG, Buffer.alloc(LIMIT + 1 - PNG.length)]), cms.headers);
    expect(justOver.statusCode).toBe(413);
    expect(stored().length).toBe(before);
    const atLimit = await upload(Buffer.concat([PNG, Buffer.alloc(LIMIT - PNG.length)]), cms.headers);
    expect(atLimit.statusCode, atLimit.body).toBe(201);
  });

  test('permissions: none → 401; read/delete only or another module → 403', async () => {
    const anonymous = await as(ctx, none, { headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/uploads', multipart(PNG));
    expect(anonymous.statusCode).toBe(401);
    expect((await upload(PNG, readOnly.headers)).statusCode).toBe(403);
    expect((await upload(PNG, iamOnly.headers)).statusCode).toBe(403);
  });

  test('wrong field, not multipart, no file → 400/415', async () => {
    const wrongField = await upload(PNG, cms.headers, 'a.png', 'image');
    expect(wrongField.statusCode).toBe(400);
    expect(wrongField.json().details).toHaveProperty('file');
    const json = await as(ctx, cms).post('/api/uploads', { file: 'x' });
    expect(json.statusCode).toBe(415);
    const noFile = await as(ctx, none, { headers: { ...cms.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/uploads', Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="note"\r\n\r\nhello\r\n--${BOUNDARY}--\r\n`));
    expect(noFile.statusCode).toBe(400);
  });

  test('GET /uploads/<name>: unknown or malformed names are 404 with an error body; no traversal', async () => {
    for (const url of ['/uploads/0123456789abcdef0123456789abcdef.png', '/uploads/..%2F..%2Fetc%2Fpasswd', '/uploads/..%2Fauth-secret', '/uploads/.hidden.part', '/uploads/x.svg']) {
      const res = await as(ctx, none).get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error).toBe('Resource not found');
    }
  });

  test('a ~200 MB upload over a real socket is refused with 413 while streaming, without buffering it', async () => {
    const address = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = ctx.app.server.address() as AddressInfo;
    expect(address).toContain(String(port));
    const total = 200 * 1024 * 1024;
    const chunk = Buffer.alloc(64 * 1024, 7);
    let sent = 0;
    const head = Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="huge.png"\r\nContent-Type: image/png\r\n\r\n`);
    const body = Readable.from((function* () {
      yield head;
      yield PNG;
      while (sent < total) {
        sent += chunk.length;
        yield chunk;
      }
      yield Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    })());
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }, 20);
    const { status, payload } = await new Promise<{ status: number; payload: string }>((resolve, reject) => {
      const req = http.request({
        host: '127.0.0.1', port, method: 'POST', path: '/api/uploads',
        headers: { ...cms.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'transfer-encoding': 'chunked' },
      }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          resolve({ status: res.statusCode ?? 0, payload: text });
          req.destroy();
        });
        expect(res.headers.connection).toBe('close');
        body.unpipe(req);
        body.destroy();
      });
      // The server may close the connection while the body is still being sent.
      req.on('error', (err: NodeJS.ErrnoException) => (['EPIPE', 'ECONNRESET'].includes(err.code ?? '') ? undefined : reject(err)));
      body.pipe(req);
    });
    clearInterval(sampler);
    expect(status).toBe(413);
    expect(sent).toBeLessThan(total);
    expect(JSON.parse(payload).error).toBe('Payload too large');
    expect(rssPeak - rssBefore).toBeLessThan(total / 4);
    expect(stored().some((name) => name.endsWith('.part'))).toBe(false);
  });
});

describe('the pixel limit counts every frame of an animation', () => {
  let small: TestContext;
  let editor: Awaited<ReturnType<typeof createUser>>;
  beforeAll(async () => {
    small = await createTestApp({ UPLOAD_MAX_PIXELS: '10000' });
    editor = await createUser(small, { cms: 'w' });
  });
  afterAll(async () => {
    await small?.close();
  });

  /** An animation of `colours` frames of 80×80 (6,400 pixels each), in `format` (one frame: a still image). */
  const animation = async (format: 'gif' | 'webp', colours: number) => {
    const frames = await Promise.all(Array.from({ length: colours }, (_, i) =>
      sharp({ create: { width: 80, height: 80, channels: 3, background: { r: 80 * i, g: 200 - 60 * i, b: 40 } } }).png().toBuffer()));
    return (frames.length > 1 ? sharp(frames, { join: { animated: true } }) : sharp(frames[0]))[format]().toBuffer();
  };
  const send = (content: Buffer) =>
    as(small, none, { headers: { ...editor.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/uploads', multipart(content));

  test.each(['gif', 'webp'] as const)('%s: three frames of 80×80 (19,200 pixels) over a 10,000 limit → 400 details.file; one frame → 201', async (format) => {
    const three = await animation(format, 3);
    expect((await sharp(three, { animated: true }).metadata()).pages).toBe(3);
    const before = readdirSync(small.config.uploadDir).length;
    const refused = await send(three);
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json()).toMatchObject({ error: 'Validation error', details: { file: expect.stringMatching(/^is too large/) } });
    expect(readdirSync(small.config.uploadDir).length).toBe(before);
    const one = await send(await animation(format, 1));
    expect(one.statusCode, one.body).toBe(201);
  });
});
