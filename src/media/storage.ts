import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Config, S3Config } from '../config.js';

/** A stored file being read: its bytes as a stream, and what serving needs to know of it. */
export type StoredFile = { body: Readable; size: number; etag: string; contentType: string | undefined };

/**
 * Where uploaded files live. Names are flat, chosen by the service (random, never from a client) and never
 * overwritten with other content, so whatever reads them may cache them for good.
 */
export interface Storage {
  readonly kind: 'local' | 's3';
  /** Stores a whole file under `name`; replaces nothing another writer could be reading (names are new). */
  put(name: string, body: Buffer, contentType: string): Promise<void>;
  /** The file as a stream, or null when there is none. */
  get(name: string): Promise<StoredFile | null>;
  /** Removes these files; names that are not there are no error. */
  delete(names: string[]): Promise<void>;
  exists(name: string): Promise<boolean>;
  close(): Promise<void>;
}

const quoted = (value: string) => `"${value}"`;

/** The local directory (UPLOAD_DIR): one instance, or several sharing a network file system. */
export class LocalStorage implements Storage {
  readonly kind = 'local';
  private ready: Promise<unknown> | undefined;

  constructor(readonly dir: string) {}

  async put(name: string, body: Buffer) {
    this.ready ??= mkdir(this.dir, { recursive: true }).finally(() => (this.ready = undefined));
    await this.ready;
    // Written beside, then renamed into place: a reader never sees half a file.
    const temp = join(this.dir, `.${name}.${process.pid}.part`);
    try {
      await writeFile(temp, body, { mode: 0o644, flag: 'wx' });
      await rename(temp, join(this.dir, name));
    } catch (err) {
      await unlink(temp).catch(() => {});
      throw err;
    }
  }

  async get(name: string): Promise<StoredFile | null> {
    const file = join(this.dir, name);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile()) return null;
    // Names are immutable: size and modification time identify the content.
    const etag = quoted(createHash('sha1').update(`${name}:${info.size}:${info.mtimeMs}`).digest('base64url').slice(0, 27));
    return { body: createReadStream(file), size: info.size, etag, contentType: undefined };
  }

  async delete(names: string[]) {
    await Promise.all(names.map((name) => unlink(join(this.dir, name)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    })));
  }

  async exists(name: string) {
    return (await stat(join(this.dir, name)).catch(() => null))?.isFile() ?? false;
  }

  async close() {}
}

const notThere = (err: unknown) => err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NoSuchKey' || err.name === 'NotFound');

/** S3-compatible object storage (AWS S3, MinIO, Cloudflare R2, …): every instance reads and writes the same bucket. */
export class S3Storage implements Storage {
  readonly kind = 's3';
  readonly client: S3Client;
  readonly bucket: string;

  constructor(config: S3Config) {
    this.bucket = config.bucket;
    this.client = new S3Client({
      region: config.region,
      endpoint: config.endpoint,
      forcePathStyle: config.forcePathStyle,
      credentials: config.accessKeyId && config.secretAccessKey ? { accessKeyId: config.accessKeyId, secretAccessKey: config.secretAccessKey } : undefined,
      // Checksums only where S3 requires them: many S3-compatible servers do not know the newer checksum headers.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      maxAttempts: 3,
    });
  }

  async put(name: string, body: Buffer, contentType: string) {
    await this.client.send(new PutObjectCommand({
      Bucket: this.bucket, Key: name, Body: body, ContentType: contentType, ContentLength: body.length,
      CacheControl: 'public, max-age=31536000, immutable',
    }));
  }

  async get(name: string): Promise<StoredFile | null> {
    try {
      const object = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: name }));
      if (!object.Body) return null;
      return { body: object.Body as Readable, size: Number(object.ContentLength ?? 0), etag: object.ETag ?? quoted(name), contentType: object.ContentType };
    } catch (err) {
      if (notThere(err)) return null;
      throw err;
    }
  }

  async delete(names: string[]) {
    // DeleteObjects takes up to 1000 keys a request.
    for (let i = 0; i < names.length; i += 1000) {
      const batch = names.slice(i, i + 1000);
      const answer = await this.client.send(new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }));
      const failed = answer.Errors?.filter((e) => e.Code !== 'NoSuchKey');
      if (failed?.length) throw new Error(`S3 delete failed for ${failed.map((e) => `${e.Key}: ${e.Code}`).join(', ')}`);
    }
  }

  async exists(name: string) {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: name }));
      return true;
    } catch (err) {
      if (notThere(err)) return false;
      throw err;
    }
  }

  async close() {
    this.client.destroy();
  }
}

const storages = new WeakMap<Config, Storage>();

/** The storage the configuration names: S3 when S3_BUCKET is set, else UPLOAD_DIR. One per configuration. */
export function storageOf(config: Config): Storage {
  let storage = storages.get(config);
  if (!storage) {
    storage = config.s3 ? new S3Storage(config.s3) : new LocalStorage(config.uploadDir);
    storages.set(config, storage);
  }
  return storage;
}

/** Closes the configuration's storage (the app's shutdown); a later `storageOf` opens a new one. */
export async function closeStorage(config: Config): Promise<void> {
  const storage = storages.get(config);
  storages.delete(config);
  await storage?.close();
}
