import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { mkdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { type Static, Type } from '@sinclair/typebox';
import { fileTypeFromBuffer } from 'file-type';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../types.js';
import { moduleRoutes } from '../../auth/guard.js';
import { audited, createAudited } from '../../data/mutations.js';
import { uuidv7 } from '../../db/schema/common.js';
import { ApiError, conflict, notFound, payloadTooLarge, unsupportedMediaType, validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { fileField, multipartError, TooLarge } from '../../http/multipart-file.js';
import { listQuerySchema } from '../../http/list-query.js';
import { ErrorBody, errorResponses, ImageVariant, Message, Nullable, Paginated, Strict, Timestamp, Uuid } from '../../http/schemas.js';
import { IMAGE_TYPES, ImageRefused, processImage } from '../../media/images.js';
import { describeUses, imageInfo, keyOf, lockUpload, removeUpload, STORED_NAME, UPLOAD_NAME, type Upload, uploadResource, usageOf, variantName } from '../../media/library.js';
import { closeStorage, storageOf } from '../../media/storage.js';

export { IMAGE_TYPES };

/** How many leading bytes file-type needs to recognise any type. */
const SNIFF_BYTES = 4100;

const imageFields = {
  path: Type.String({ description: '`/uploads/<name>`: what image fields hold', examples: ['/uploads/3f9a0c8e1b2d4e5f60718293a4b5c6d7.jpg'] }),
  url: Type.String({ description: 'Absolute URL (BASE_URL)', examples: ['https://example.com/uploads/3f9a0c8e1b2d4e5f60718293a4b5c6d7.jpg'] }),
  width: Type.Integer({ description: 'Width in pixels, upright' }),
  height: Type.Integer({ description: 'Height in pixels, upright' }),
  variants: Type.Array(ImageVariant, { description: 'WebP copies 320, 640, 1280, 1920 wide: only those narrower than the original' }),
  srcset: Type.String({ description: 'For `<img srcset>`: the variants and the original with their widths' }),
};

export const UploadResult = Strict({
  ...imageFields,
  name: Type.String({ description: 'The stored name (random)' }),
  type: Type.String({ description: 'Content-Type of the original', examples: ['image/jpeg'] }),
  bytes: Type.Integer({ description: 'Size of the original as stored (re-encoded, without metadata)' }),
}, { description: 'The stored image; its original is upright and carries no metadata (EXIF, GPS, XMP)' });

const Use = Strict({
  resource: Type.String({ examples: ['projects'] }),
  id: Uuid(),
  field: Type.String({ examples: ['cover_photo'] }),
  title: Nullable(Type.String({ description: 'Name or title of the record (a gallery image: its project\'s)' })),
});

const UploadListItem = Strict({
  id: Uuid(),
  name: Type.String(),
  ...imageFields,
  type: Type.String(),
  bytes: Type.Integer(),
  created_by: Nullable(Strict({ id: Uuid(), name: Type.String() })),
  created_at: Timestamp(),
  used_by: Type.Array(Use, { description: 'Records naming this file (or one of its variants) in a field; empty: unused, may be deleted' }),
});

const NameParams = Strict({ name: Type.String({ pattern: UPLOAD_NAME, maxLength: 40, description: 'Stored name of an original', examples: ['3f9a0c8e1b2d4e5f60718293a4b5c6d7.jpg'] }) });


/**
 * Holds back the first bytes until the type is known: refuses anything that is not an accepted image before a
 * byte is written, and counts the rest so a file over the limit fails while streaming (nothing is buffered
 * beyond the sniffed head).
 */
class ImageGate extends Transform {
  private head: Buffer[] = [];
  private headLength = 0;
  private size = 0;
  extension: string | undefined;

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback) {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(new TooLarge());
    if (this.extension) return done(null, chunk);
    this.head.push(chunk);
    this.headLength += chunk.length;
    if (this.headLength < SNIFF_BYTES) return done();
    this.release().then(() => done(), done);
  }

  override _flush(done: TransformCallback) {
    if (this.extension) return done();
    this.release().then(() => done(), done);
  }

  private async release() {
    const head = Buffer.concat(this.head);
    this.head = [];
    const type = await fileTypeFromBuffer(head.subarray(0, SNIFF_BYTES));
    if (!type || !IMAGE_TYPES[type.ext]) {
      throw unsupportedMediaType('Only JPEG, PNG, WebP, GIF and AVIF images are accepted (recognised from the file content)');
    }
    this.extension = type.ext;
    this.push(head);
  }
}

/**
 * `POST /api/uploads` (cms or crm write), the public `GET /uploads/:name` (CONTRACT §11), and the staff's list and
 * delete of uploads (cms). The upload is streamed to a temporary file in UPLOAD_DIR, processed there (upright, no
 * metadata, variants) and stored through the configured storage (UPLOAD_DIR or S3); a refused or partial upload
 * leaves nothing.
 */
export default async function uploadRoutes(app: App) {
  const { uploadDir, uploadMaxBytes, uploadMaxPixels, baseUrl } = app.config;
  const { db } = app.database;
  await mkdir(uploadDir, { recursive: true });
  const storage = storageOf(app.config);
  app.addHook('onClose', async () => closeStorage(app.config));

  const serve = async (request: FastifyRequest<{ Params: { name: string } }>, reply: FastifyReply) => {
    const { name } = request.params;
    const match = STORED_NAME.exec(name);
    if (!match) throw notFound('File');
    const file = await storage.get(name);
    if (!file) throw notFound('File');
    reply
      .header('etag', file.etag)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'cross-origin');
    const inm = request.headers['if-none-match'];
    if (request.method === 'HEAD' || (inm && inm.split(',').some((tag) => tag.trim().replace(/^W\//, '') === file.etag))) {
      file.body.destroy();
      if (request.method !== 'HEAD') return reply.code(304).send();
    }
    reply.header('content-type', IMAGE_TYPES[match[3]]).header('content-length', file.size);
    if (request.method === 'HEAD') return reply.send();
    return reply.send(file.body as never); // a stream; the GET schema only documents it
  };
  // HEAD declared first (and kept out of the docs): Fastify's own HEAD route would read the whole file or S3 object to discard it.
  app.head('/uploads/:name', { config: { rateBucket: 'read' }, schema: { hide: true, params: Strict({ name: Type.String({ maxLength: 100 }) }) } }, serve);
  app.get('/uploads/:name', {
    config: { rateBucket: 'read', revalidates: true },
    schema: {
      tags: ['uploads'],
      security: [],
      summary: 'An uploaded image or one of its variants (public)',
      description: 'Streams the file from the storage (UPLOAD_DIR or S3) with its Content-Type, an ETag and `Cache-Control: public, max-age=31536000, immutable`: '
        + 'names are random and never reused, so a file never changes. `If-None-Match` with the ETag answers 304. Variants are `<key>-<width>.webp`.',
      params: Strict({ name: Type.String({ maxLength: 100, examples: ['3f9a0c8e1b2d4e5f60718293a4b5c6d7-640.webp'] }) }),
      response: {
        200: { description: 'The image', content: { 'image/*': { schema: { type: 'string', format: 'binary' } } } },
        304: { description: 'Not modified (ETag matched)', type: 'null' },
        404: ErrorBody,
      },
    },
  }, serve);

  await app.register(async (scoped: App) => {
    await scoped.register(multipart, {
      // The gate enforces the limit too; busboy's own limit is a backstop one byte above it.
      limits: { fileSize: uploadMaxBytes + 1, files: 1, fields: 5, parts: 10, fieldSize: 1024, headerPairs: 100 },
    });
    await scoped.register(moduleRoutes(['cms', 'crm'], async (guarded: App) => {
      guarded.post('/api/uploads', {
        schema: {
          tags: ['uploads'],
          summary: 'Upload an image (multipart/form-data, field `file`)',
          description: 'JPEG, PNG, WebP, GIF or AVIF, recognised from the bytes, at most UPLOAD_MAX_BYTES (413) and UPLOAD_MAX_PIXELS pixels '
            + '(400 `details.file`: decompression bombs). The stored original is rotated upright (EXIF orientation) and re-encoded without '
            + 'metadata (no EXIF, GPS, XMP); WebP variants 320, 640, 1280 and 1920 pixels wide are made, only those narrower than the original. '
            + 'Put `path` into image fields; `srcset` goes straight into `<img srcset>`.',
          consumes: ['multipart/form-data'],
          body: Strict({ file: Type.String({ format: 'binary' }) }),
          response: { 201: UploadResult, 413: ErrorBody, 415: ErrorBody, ...errorResponses },
        },
        // The multipart body is read by the handler as a stream; the schema above documents it.
        validatorCompiler: () => () => true,
      }, async (request, reply) => {
        const { part, refuse } = await fileField(request, uploadMaxBytes, { what: 'the file', translate });
        const key = randomBytes(16).toString('hex');
        const temp = join(uploadDir, `.${key}.part`);
        const gate = new ImageGate(uploadMaxBytes);
        const writer = createWriteStream(temp, { flags: 'wx', mode: 0o600 });
        const stored: string[] = [];
        try {
          await pipeline(part.file, gate, writer);
          if (part.file.truncated) throw new TooLarge();
          if (!gate.extension) throw unsupportedMediaType('The file is empty');
          const ext = gate.extension;
          const image = await processImage(temp, ext, uploadMaxPixels);
          // Gone before the answer: nothing of this upload stays in UPLOAD_DIR but what the storage keeps.
          await unlink(temp).catch(() => {});
          const name = `${key}.${ext}`;
          const variants = image.variants.map((v) => ({ width: v.width, height: v.height, name: variantName(key, v.width), bytes: v.buffer.length }));
          await Promise.all([
            storage.put(name, image.buffer, IMAGE_TYPES[ext]).then(() => stored.push(name)),
            ...image.variants.map((v, i) => storage.put(variants[i].name, v.buffer, 'image/webp').then(() => stored.push(variants[i].name))),
          ]);
          const actor = await actorOf(app, request);
          const row = await createAudited(db, actor, uploadResource, {
            id: uuidv7(), name, type: IMAGE_TYPES[ext], bytes: image.buffer.length, width: image.width, height: image.height, variants, created_by: actor.userId,
          });
          return reply.code(201).send({ ...imageInfo(row, baseUrl), name, type: row.type, bytes: row.bytes });
        } catch (err) {
          await storage.delete(stored).catch((e: unknown) => request.log.error({ err: e }, 'stored files of a failed upload not removed'));
          throw refuse(err);
        } finally {
          // The file may be opened after the pipeline failed: only once the writer has closed is there nothing left to come.
          if (!writer.closed) await once(writer, 'close').catch(() => {});
          await unlink(temp).catch(() => {});
        }
      });
    }));
  });

  await app.register(moduleRoutes('cms', async (cms: App) => {
    const ListQuery = listQuerySchema(uploadResource);
    cms.get('/api/uploads', {
      schema: {
        tags: ['uploads'],
        summary: 'List uploads, with where each is used',
        description: 'Every uploaded image, newest first, with its size, variants and the records naming it (projects\' cover photos and descriptions, '
          + 'gallery images, articles\' cover images and content, careers, amenities, campaigns, users\' pictures). `q` searches the name. '
          + 'An upload nothing uses may be deleted; one unused for UPLOAD_UNUSED_RETENTION_HOURS is removed by the service.',
        querystring: ListQuery,
        response: { 200: Paginated(UploadListItem), ...errorResponses },
      },
    }, async (request) => {
      const page = await app.lists.page<Omit<Upload, 'created_by'> & { created_by: { id: string | null; name: string | null } | null }>(uploadResource, request.query as Static<typeof ListQuery>);
      const usage = await usageOf(db, page.data.map((u) => keyOf(u.name)));
      return {
        ...page,
        data: page.data.map((u) => ({
          ...u,
          ...imageInfo(u, baseUrl),
          created_by: u.created_by?.id ? { id: u.created_by.id, name: u.created_by.name ?? '' } : null,
          used_by: usage.get(keyOf(u.name)) ?? [],
        })),
      };
    });

    cms.delete('/api/uploads/:name', {
      schema: {
        tags: ['uploads'],
        summary: 'Delete an unused upload and its variants',
        description: '409 naming the records that still use it (remove the references first); otherwise the row (audited) and every stored file go.',
        params: NameParams,
        response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Upload deleted',
      },
    }, async (request) => {
      const { name } = request.params;
      await audited(db, await actorOf(app, request), async (work) => {
        const upload = await lockUpload(work, name);
        if (!upload) throw notFound('Upload');
        const uses = (await usageOf(work.tx, [keyOf(name)])).get(keyOf(name)) ?? [];
        if (uses.length) throw conflict(`The file is still used by ${describeUses(uses)}; remove those references first`);
        await removeUpload(work, storage, upload);
      });
      return { message: 'Upload deleted' };
    });
  }));
}

/** A failure while receiving an image, as the client is told it: an image sharp refuses is a 400, the rest as any file. */
function translate(err: unknown, maxBytes: number): unknown {
  return err instanceof ImageRefused ? validationError({ file: err.message }) : multipartError(err, maxBytes);
}
