import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ApiError, payloadTooLarge, unsupportedMediaType, validationError } from '../errors.js';

/** Thrown while reading a file that passed its size limit. */
export class TooLarge extends Error {}

/**
 * A failure while receiving a file, as the client is told it: over the limit → 413; the multipart parser's complaints
 * about the body (plain Errors: "Unexpected end of multipart data", "Malformed part header"…, or @fastify/multipart's
 * FST_ codes) → 400 `details.file`; a system error (ENOSPC…) or a bug stays a 500.
 */
export function multipartError(err: unknown, maxBytes: number): unknown {
  if (err instanceof ApiError) return err;
  const code = (err as { code?: string } | null)?.code;
  if (err instanceof TooLarge || code === 'FST_REQ_FILE_TOO_LARGE' || code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT') {
    return payloadTooLarge(`The file is larger than the limit of ${maxBytes} bytes`);
  }
  if (code?.startsWith('FST_') || (err instanceof Error && err.constructor === Error && code === undefined)) {
    return validationError({ file: `could not be read: the multipart body is malformed (${(err as Error).message})` });
  }
  return err;
}

/**
 * The multipart field `file` of a request (415 when the body is not multipart, 400 when the field is missing), and
 * `refuse`, which turns a failure while reading it into the client's error: a refusal before the whole body arrived
 * closes the connection, so the rest of the body is never read.
 */
export async function fileField(request: FastifyRequest, maxBytes: number, options: { what: string; translate?: (err: unknown, maxBytes: number) => unknown }) {
  const translate = options.translate ?? multipartError;
  if (!request.isMultipart()) throw unsupportedMediaType(`Send ${options.what} as multipart/form-data in the field "file"`);
  const refuse = (err: unknown) => {
    const http = translate(err, maxBytes);
    return http instanceof ApiError && !request.raw.readableEnded ? new ApiError(http.statusCode, http.body, { ...http.headers, connection: 'close' }) : http;
  };
  const part: MultipartFile | undefined = await request.file().catch((err: unknown) => {
    throw refuse(err);
  });
  if (!part || part.type !== 'file') throw validationError({ file: 'is required' });
  if (part.fieldname !== 'file') {
    part.file.resume();
    throw validationError({ file: 'is required' });
  }
  return { part, refuse };
}
