import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import S3rver from 's3rver';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { sql } from 'drizzle-orm';
import { unusedUploadsCleanup } from '../src/media/cleanup.js';
import { storageOf } from '../src/media/storage.js';
import { as, createTestApp, createUser, none, type TestContext } from './helpers.js';

const BOUNDARY = '----pms-media-boundary-41c9';
const multipart = (content: Buffer, filename = 'photo.jpg') => Buffer.concat([
  Buffer.from(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
  content,
  Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
]);

const RED = { r: 220, g: 20, b: 20 };
const BLUE = { r: 20, g: 20, b: 220 };

/**
 * A camera photo as phones write it: stored 2000×1000 (left half red, right half blue) with EXIF orientation 6
 * ("rotate 90° clockwise to view"), the GPS position of the house and a camera model.
 */
async function cameraPhoto() {
  const blue = await sharp({ create: { width: 1000, height: 1000, channels: 3, background: BLUE } }).png().toBuffer();
  return sharp({ create: { width: 2000, height: 1000, channels: 3, background: RED } })
    .composite([{ input: blue, left: 1000, top: 0 }])
    .jpeg({ quality: 90 })
    .withExif({
      IFD0: { Make: 'PhoneMaker', Model: 'Phone 12', Software: 'camera 1.0' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 2400/100', GPSLongitudeRef: 'E', GPSLongitude: '2/1 17/1 4000/100' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer();
}

const smallPng = (width: number, height: number) => sharp({ create: { width, height, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 1 } } }).png().toBuffer();

/** A PNG whose header claims 30000×30000 pixels (900 megapixels) in a few hundred bytes: a decompression bomb. */
async function bomb() {
  const png = Buffer.from(await smallPng(1, 1));
  // IHDR: length(4) "IHDR"(4) width(4) height(4) … crc(4), right after the 8-byte signature.
  png.writeUInt32BE(30000, 16);
  png.writeUInt32BE(30000, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)) >>> 0, 29);
  return png;
}

type Kind = 'local' | 's3';
const kinds: Kind[] = ['local', 's3'];

describe.each(kinds)('images and storage (%s)', (kind) => {
  let ctx: TestContext;
  let s3: S3rver | undefined;
  let s3Dir: string | undefined;
  let editor: Awaited<ReturnType<typeof createUser>>;
  let reader: Awaited<ReturnType<typeof createUser>>;
  let crmWriter: Awaited<ReturnType<typeof createUser>>;

  beforeAll(async () => {
    let env: Record<string, string> = {};
    if (kind === 's3') {
      s3Dir = mkdtempSync(join(tmpdir(), 'pms-s3rver-'));
      s3 = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: s3Dir, configureBuckets: [{ name: 'media-test', configs: [] }] });
      const { port } = await s3.run();
      env = { S3_ENDPOINT: `http://127.0.0.1:${port}`, S3_BUCKET: 'media-test', S3_REGION: 'us-east-1', S3_ACCESS_KEY_ID: 'S3RVER', S3_SECRET_ACCESS_KEY: 'S3RVER', S3_FORCE_PATH_STYLE: 'true' };
    }
    ctx = await createTestApp({ ...env, BASE_URL: 'https://cdn.example.com', UPLOAD_UNUSED_RETENTION_HOURS: '24' });
    editor = await createUser(ctx, { cms: 'rwd' });
    reader = await createUser(ctx, { cms: 'r' });
    crmWriter = await createUser(ctx, { crm: 'rw' });
  });
  afterAll(async () => {
    await ctx?.close();
    await s3?.close();
    if (s3Dir) rmSync(s3Dir, { recursive: true, force: true });
  });

  const upload = (content: Buffer, who = editor) =>
    as(ctx, none, { headers: { ...who.headers, 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } }).post('/api/uploads', multipart(content));
  const storage = () => storageOf(ctx.config);
  const localFiles = () => readdirSync(ctx.config.uploadDir).filter((name) => !name.startsWith('.'));

  test('the configured storage is the one in use', () => {
    expect(storage().kind).toBe(kind);
  });

  let photo: { path: string; url: string; name: string; width: number; height: number; variants: { width: number; path: string; url: string }[]; srcset: string };

  test('a camera photo comes back upright, without EXIF or GPS, with its size, variants below its width and a srcset', async () => {
    const original = await cameraPhoto();
    const sent = await sharp(original).metadata();
    expect(sent.orientation).toBe(6);
    expect(sent.exif?.includes(Buffer.from('PhoneMaker'))).toBe(true);

    const res = await upload(original);
    expect(res.statusCode, res.body).toBe(201);
    photo = res.json();
    expect(photo.path).toMatch(/^\/uploads\/[a-f0-9]{32}\.jpg$/);
    expect(photo.url).toBe(`https://cdn.example.com${photo.path}`);
    // Upright: the 2000×1000 stored picture is 1000 wide and 2000 tall when viewed.
    expect(photo).toMatchObject({ width: 1000, height: 2000, type: 'image/jpeg' });
    // Only the widths below the original's 1000: never enlarged.
    expect(photo.variants.map((v) => v.width)).toEqual([320, 640]);
    const key = photo.name.slice(0, 32);
    expect(photo.variants.map((v) => v.path)).toEqual([`/uploads/${key}-320.webp`, `/uploads/${key}-640.webp`]);
    expect(photo.srcset).toBe(`${photo.variants[0].url} 320w, ${photo.variants[1].url} 640w, ${photo.url} 1000w`);

    const served = await as(ctx, none).get(photo.path);
    expect(served.statusCode).toBe(200);
    expect(served.headers['content-type']).toBe('image/jpeg');
    expect(served.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const meta = await sharp(served.rawPayload).metadata();
    expect(meta).toMatchObject({ format: 'jpeg', width: 1000, height: 2000 });
    expect(meta.exif).toBeUndefined();
    expect(meta.orientation).toBeUndefined();
    expect(meta.xmp).toBeUndefined();
    expect(served.rawPayload.includes(Buffer.from('PhoneMaker'))).toBe(false);
    expect(served.rawPayload.includes(Buffer.from('Exif\0'))).toBe(false);
    // Upright for real: the red half is on top, the blue half below.
    const { data, info } = await sharp(served.rawPayload).raw().toBuffer({ resolveWithObject: true });
    const pixel = (x: number, y: number) => [...data.subarray((y * info.width + x) * info.channels, (y * info.width + x) * info.channels + 3)];
    const near = (actual: number[], expected: { r: number; g: number; b: number }) =>
      Math.abs(actual[0] - expected.r) + Math.abs(actual[1] - expected.g) + Math.abs(actual[2] - expected.b) < 40;
    expect(near(pixel(500, 200), RED), String(pixel(500, 200))).toBe(true);
    expect(near(pixel(500, 1800), BLUE), String(pixel(500, 1800))).toBe(true);
  });

  test('variants are WebP of their width, upright and without metadata, served with immutable caching and an ETag', async () => {
    for (const variant of photo.variants) {
      const res = await as(ctx, none).get(variant.path);
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('image/webp');
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      const meta = await sharp(res.rawPayload).metadata();
      expect(meta).toMatchObject({ format: 'webp', width: variant.width, height: variant.width * 2 });
      expect(meta.exif).toBeUndefined();
      const etag = res.headers.etag as string;
      expect(etag).toMatch(/^"/);
      const again = await as(ctx, none).get(variant.path, { 'if-none-match': etag });
      expect(again.statusCode).toBe(304);
      expect(again.rawPayload.length).toBe(0);
    }
    const head = await ctx.app.inject({ method: 'HEAD', url: photo.variants[0].path });
    expect(head.statusCode).toBe(200);
    expect(head.headers['content-type']).toBe('image/webp');
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect(head.rawPayload.length).toBe(0);
    // No 1280 or 1920 variant exists for a 1000-wide image.
    expect((await as(ctx, none).get(photo.path.replace('.jpg', '-1280.webp'))).statusCode).toBe(404);
  });

  test('the upload is recorded in the uploads table and audited', async () => {
    const { rows } = await ctx.database.db.execute(sql`select name, type, bytes, width, height, variants, created_by from uploads where name = ${photo.name}`) as unknown as { rows: Record<string, unknown>[] };
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ type: 'image/jpeg', width: 1000, height: 2000, created_by: editor.id });
    expect((rows[0].variants as { width: number }[]).map((v) => v.width)).toEqual([320, 640]);
    const auditor = await createUser(ctx, { iam: 'r' });
    const logs = (await as(ctx, auditor.token).get('/api/iam/activity-logs?resource=uploads&action=create&limit=100')).json();
    expect(logs.data.some((log: { user: { id: string } | null; changes: { after: { name?: string } } }) => log.changes.after.name === photo.name)).toBe(true);
  });

  test('a small image gets no variants; its srcset is the original alone; a crm writer may upload', async () => {
    const res = await upload(await smallPng(300, 200), crmWriter);
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ width: 300, height: 200, variants: [], type: 'image/png', srcset: `${body.url} 300w` });
    expect(body.path).toMatch(/\.png$/);
  });

  test('a wide image gets every variant below its width, as WebP', async () => {
    const res = await upload(await sharp({ create: { width: 2400, height: 600, channels: 3, background: RED } }).jpeg().toBuffer());
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().variants.map((v: { width: number }) => v.width)).toEqual([320, 640, 1280, 1920]);
    const largest = await as(ctx, none).get(res.json().variants[3].path);
    expect(await sharp(largest.rawPayload).metadata()).toMatchObject({ format: 'webp', width: 1920, height: 480 });
  });

  test('a decompression bomb (a tiny PNG claiming 30000×30000 pixels) → 400 details.file, nothing stored', async () => {
    const before = kind === 'local' ? localFiles().length : 0;
    const res = await upload(await bomb());
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({ error: 'Validation error', details: { file: expect.stringMatching(/too large/) } });
    if (kind === 'local') expect(localFiles().length).toBe(before);
    expect(readdirSync(ctx.config.uploadDir).some((name) => name.endsWith('.part'))).toBe(false);
  });

  test('a damaged image of an accepted type → 400 details.file', async () => {
    const jpeg = await cameraPhoto();
    const res = await upload(jpeg.subarray(0, 600));
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().details.file).toMatch(/could not be read/);
  });

  let projectId: string;

  test('a project with that cover photo (and gallery image) gives its variants; the string fields keep their meaning', async () => {
    const created = await as(ctx, editor.token).post('/api/cms/projects', { name: `Media Heights ${kind}`, status: 'active', type: 'residential', cover_photo: photo.path, published: true });
    expect(created.statusCode, created.body).toBe(201);
    projectId = created.json().id;
    const gallery = await as(ctx, editor.token).post(`/api/cms/projects/${projectId}/galleries`, { images: [{ image_url: photo.url }, { image_url: 'https://elsewhere.example.com/x.jpg' }] });
    expect(gallery.statusCode, gallery.body).toBe(201);

    const detail = (await as(ctx, editor.token).get(`/api/cms/projects/${projectId}`)).json();
    expect(detail.cover_photo).toBe(photo.path);
    expect(detail.cover_photo_variants).toEqual({ path: photo.path, url: photo.url, width: 1000, height: 2000, variants: photo.variants, srcset: photo.srcset });
    expect(detail.galleries[0]).toMatchObject({ image_url: photo.url, image: { srcset: photo.srcset } });
    expect(detail.galleries[1]).toMatchObject({ image_url: 'https://elsewhere.example.com/x.jpg', image: null });

    const list = (await as(ctx, editor.token).get(`/api/cms/projects?q=${encodeURIComponent(`Media Heights ${kind}`)}`)).json();
    expect(list.data[0].cover_photo_variants.srcset).toBe(photo.srcset);
    const published = (await as(ctx, none).get(`/api/public/projects/${detail.slug}`)).json();
    expect(published.cover_photo_variants.variants).toEqual(photo.variants);

    const article = await as(ctx, editor.token).post('/api/cms/articles', { title: `No picture ${kind}`, content: 'Text', type: 'news' });
    expect((await as(ctx, editor.token).get(`/api/cms/articles/${article.json().id}`)).json().cover_image_variants).toBeNull();
  });

  test('the list shows where each upload is used; cms read is enough, crm is not', async () => {
    const res = await as(ctx, reader.token).get('/api/uploads?limit=100');
    expect(res.statusCode, res.body).toBe(200);
    const item = res.json().data.find((u: { name: string }) => u.name === photo.name);
    expect(item).toMatchObject({ path: photo.path, width: 1000, height: 2000, srcset: photo.srcset, created_by: { id: editor.id } });
    expect(item.used_by).toEqual(expect.arrayContaining([
      { resource: 'projects', id: projectId, field: 'cover_photo', title: `Media Heights ${kind}` },
      { resource: 'galleries', id: expect.any(String), field: 'image_url', title: `Media Heights ${kind}` },
    ]));
    expect(res.json().data.filter((u: { used_by: unknown[] }) => u.used_by.length === 0).length).toBeGreaterThan(0);
    expect((await as(ctx, crmWriter.token).get('/api/uploads')).statusCode).toBe(403);
    expect((await as(ctx, none).get('/api/uploads')).statusCode).toBe(401);
  });

  test('deleting a used upload → 409 naming its users; an unused one → 200, audited, and its files are gone', async () => {
    const used = await as(ctx, editor.token).delete(`/api/uploads/${photo.name}`);
    expect(used.statusCode).toBe(409);
    expect(used.json()).toMatchObject({ error: 'Conflict', message: expect.stringContaining(`Media Heights ${kind}`) });
    expect(await storage().exists(photo.name)).toBe(true);

    expect((await as(ctx, reader.token).delete(`/api/uploads/${photo.name}`)).statusCode).toBe(403);
    expect((await as(ctx, editor.token).delete('/api/uploads/not-a-name')).statusCode).toBe(400);
    expect((await as(ctx, editor.token).delete(`/api/uploads/${'0'.repeat(32)}.jpg`)).statusCode).toBe(404);

    // A deleted project in the trash keeps its files while it can be restored; once purged, nothing names the file and
    // it may go: original and variants.
    expect((await as(ctx, editor.token).delete(`/api/cms/projects/${projectId}`)).statusCode).toBe(200);
    const held = await as(ctx, editor.token).delete(`/api/uploads/${photo.name}`);
    expect(held.statusCode).toBe(409);
    expect(held.json().message).toBe(`The file is still used by the deleted "Media Heights ${kind}" in the trash (restorable until it is purged); remove those references first`);
    await ctx.database.db.execute(sql`delete from trash`);
    const gone = await as(ctx, editor.token).delete(`/api/uploads/${photo.name}`);
    expect(gone.statusCode, gone.body).toBe(200);
    for (const path of [photo.path, ...photo.variants.map((v) => v.path)]) {
      expect((await as(ctx, none).get(path)).statusCode, path).toBe(404);
      expect(await storage().exists(path.slice('/uploads/'.length))).toBe(false);
    }
    if (kind === 'local') expect(localFiles().some((name) => name.startsWith(photo.name.slice(0, 32)))).toBe(false);
    const logs = (await as(ctx, (await createUser(ctx, { iam: 'r' })).token).get('/api/iam/activity-logs?resource=uploads&action=delete&limit=100')).json();
    expect(logs.data.some((log: { changes: { before: { name?: string } } }) => log.changes.before.name === photo.name)).toBe(true);
    expect((await as(ctx, editor.token).delete(`/api/uploads/${photo.name}`)).statusCode).toBe(404);
  });

  test('the cleanup job removes only uploads older than the retention that nothing uses', async () => {
    const names: Record<string, { name: string; path: string; variants: { path: string }[] }> = {};
    for (const label of ['oldUnused', 'oldUsed', 'newUnused']) {
      const res = await upload(await sharp({ create: { width: 700, height: 400, channels: 3, background: BLUE } }).jpeg().toBuffer());
      expect(res.statusCode).toBe(201);
      names[label] = res.json();
    }
    expect(names.oldUnused.variants).toHaveLength(2);
    const amenity = await as(ctx, editor.token).post('/api/cms/amenities', { name: `Pool ${kind}`, cover_photo: names.oldUsed.path });
    expect(amenity.statusCode, amenity.body).toBe(201);
    const old = [names.oldUnused.name, names.oldUsed.name];
    await ctx.database.db.execute(sql`update uploads set created_at = now() - interval '25 hours' where name in (${sql.join(old.map((n) => sql`${n}`), sql`, `)})`);

    await unusedUploadsCleanup.handler({}, { config: ctx.config, database: ctx.database, log: ctx.app.log, mailer: ctx.app.mailer, jobs: ctx.app.jobs });

    expect((await as(ctx, none).get(names.oldUnused.path)).statusCode).toBe(404);
    for (const variant of names.oldUnused.variants) expect(await storage().exists(variant.path.slice('/uploads/'.length))).toBe(false);
    expect((await as(ctx, none).get(names.oldUsed.path)).statusCode).toBe(200);
    expect((await as(ctx, none).get(names.newUnused.path)).statusCode).toBe(200);
    const listed = (await as(ctx, editor.token).get('/api/uploads?limit=100')).json().data.map((u: { name: string }) => u.name);
    expect(listed).not.toContain(names.oldUnused.name);
    expect(listed).toEqual(expect.arrayContaining([names.oldUsed.name, names.newUnused.name]));
    const amenities = (await as(ctx, none).get('/api/public/amenities')).json().data;
    expect(amenities.find((a: { name: string }) => a.name === `Pool ${kind}`).cover_photo_variants.path).toBe(names.oldUsed.path);
  });

  test('unknown and malformed names are 404', async () => {
    for (const url of [`/uploads/${'a'.repeat(32)}.jpg`, `/uploads/${'a'.repeat(32)}-640.webp`, '/uploads/..%2Fauth-secret', '/uploads/x.svg']) {
      expect((await as(ctx, none).get(url)).statusCode, url).toBe(404);
    }
  });

  if (kind === 's3') {
    test('with S3 nothing but temporary files touches UPLOAD_DIR', () => {
      expect(localFiles()).toEqual([]);
    });
  }
});
