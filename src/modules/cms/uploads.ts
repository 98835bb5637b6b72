import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { Type } from '@sinclair/typebox';
import { fileTypeFromBuffer } from 'file-type';
import type { App } from '../../app.js';
import { moduleRoutes } from '../../auth/guard.js';
import { ApiError, notFound, payloadTooLarge, unsupportedMediaType, validationError } from '../../errors.js';
import { ErrorBody, errorResponses, Strict } from '../../http/schemas.js';

/** Image types accepted (CONTRACT §11), by the extension file-type detects → served Content-Type. */
export const IMAGE_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
};

/** Stored names: 32 random hex characters and an accepted extension; nothing else is ever served. */
const NAME = /^[a-f0-9]{32}\.(jpg|png|webp|gif|avif)$/;
/** How many leading bytes file-type needs to recognise any type. */
const SNIFF_BYTES = 4100;

export const UploadResult = Strict({ path: Type.String(), url: Type.String() });

export class TooLarge extends Error {}

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
 * `POST /api/uploads` (cms or crm write) and the public `GET /uploads/:name` (CONTRACT §11). Files are streamed to a
 * temporary file in UPLOAD_DIR and renamed into place once complete; a refused or partial upload leaves nothing.
 */
export default async function uploadRoutes(app: App) {
  const { uploadDir, uploadMaxBytes, baseUrl } = app.config;
  await mkdir(uploadDir, { recursive: true });

  app.get('/uploads/:name', {
    config: { rateBucket: 'read' },
    schema: {
      tags: ['uploads'],
      summary: 'An uploaded image (public)',
      params: Strict({ name: Type.String({ maxLength: 100 }) }),
      response: { 200: Type.String({ format: 'binary', description: 'The image, with its Content-Type' }), 404: ErrorBody },
    },
  }, async (request, reply) => {
    const { name } = request.params;
    const match = NAME.exec(name);
    if (!match) throw notFound('File');
    const file = join(uploadDir, name);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) throw notFound('File');
    return reply
      .header('content-type', IMAGE_TYPES[match[1]])
      .header('content-length', info.size)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('cross-origin-resource-policy', 'cross-origin')
      .send(createReadStream(file) as never); // a stream; the schema above only documents it
  });

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
          consumes: ['multipart/form-data'],
          body: Strict({ file: Type.String({ format: 'binary' }) }),
          response: { 201: UploadResult, 413: ErrorBody, 415: ErrorBody, ...errorResponses },
        },
        // The multipart body is read by the handler as a stream; the schema above documents it.
        validatorCompiler: () => () => true,
      }, async (request, reply) => {
        if (!request.isMultipart()) throw unsupportedMediaType('Send the file as multipart/form-data in the field "file"');
        // A refusal before the whole body arrived closes the connection: the rest of the body is never read.
        const refuse = (err: unknown) => {
          const http = translate(err, uploadMaxBytes);
          return http instanceof ApiError && !request.raw.readableEnded
            ? new ApiError(http.statusCode, http.body, { ...http.headers, connection: 'close' })
            : http;
        };
        const part = await request.file().catch((err) => {
          throw refuse(err);
        });
        if (!part || part.type !== 'file') throw validationError({ file: 'is required' });
        if (part.fieldname !== 'file') {
          part.file.resume();
          throw validationError({ file: 'is required' });
        }
        const id = randomBytes(16).toString('hex');
        const temp = join(uploadDir, `.${id}.part`);
        const gate = new ImageGate(uploadMaxBytes);
        const writer = createWriteStream(temp, { flags: 'wx', mode: 0o644 });
        try {
          await pipeline(part.file, gate, writer);
          if (part.file.truncated) throw new TooLarge();
          if (!gate.extension) throw unsupportedMediaType('The file is empty');
          const name = `${id}.${gate.extension}`;
          await rename(temp, join(uploadDir, name));
          return reply.code(201).send({ path: `/uploads/${name}`, url: `${baseUrl.replace(/\/+$/, '')}/uploads/${name}` });
        } catch (err) {
          // The file may be opened after the pipeline failed: only once the writer has closed is there nothing left to come.
          if (!writer.closed) await once(writer, 'close').catch(() => {});
          await unlink(temp).catch(() => {});
          throw refuse(err);
        }
      });
    }));
  });
}

export function translate(err: unknown, maxBytes: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string } | null)?.code;
  if (err instanceof TooLarge || code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return payloadTooLarge(`The file is larger than the limit of ${maxBytes} bytes`);
  }
  // The multipart parser's complaints about the body (plain Errors: "Unexpected end of multipart data", "Malformed part
  // header"…, or @fastify/multipart's FST_ codes) are the client's; a system error (ENOSPC…) or a bug stays a 500.
  if (code?.startsWith('FST_') || (err instanceof Error && err.constructor === Error && code === undefined)) {
    return validationError({ file: `could not be read: the multipart body is malformed (${(err as Error).message})` });
  }
  return err;
}
