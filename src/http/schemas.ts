import { type TSchema, Type, type TObject, type TProperties } from '@sinclair/typebox';

/** Shared schema pieces: one declaration validates, serialises and documents. */
export const Uuid = (options: object = {}) => Type.String({ format: 'uuid', ...options });
/** A timestamp in an answer: Date values are serialised as ISO 8601 UTC with milliseconds. */
export const Timestamp = (options: object = {}) => Type.Unsafe<Date | string>({ type: 'string', format: 'date-time', ...options });
/** A timestamp in a request: any ISO 8601 form with a zone. */
export const TimestampInput = (options: object = {}) => Type.String({ format: 'date-time', ...options });
/** An amount of money as stored (numeric(14,2)): 0 up to what the column holds. */
export const Money = (options: object = {}) => Type.Number({ minimum: 0, maximum: 999_999_999_999.99, ...options });
/** An area as stored (numeric(12,2)). */
export const Measure = (options: object = {}) => Type.Number({ minimum: 0, maximum: 9_999_999_999.99, ...options });
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Text = (options: object = {}) => Type.String({ maxLength: 10_000, ...options });
export const RequiredText = (options: object = {}) => Type.String({ minLength: 1, maxLength: 500, ...options });
export const Email = () => Type.String({ format: 'email', maxLength: 254 });
export const StringEnum = <T extends readonly string[]>(values: T, options: object = {}) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
export const Strict = <T extends TProperties>(properties: T, options: object = {}) =>
  Type.Object(properties, { additionalProperties: false, ...options });
/** Every field optional and no unknown ones: the body of a PATCH. */
export const PartialStrict = <T extends TObject>(schema: T) => Type.Partial(schema, { additionalProperties: false, minProperties: 1 });

export const IdParams = Strict({ id: Uuid({ description: 'The record\'s id' }) });
export const Message = Strict({ message: Type.String({ description: 'What happened, in words', examples: ['Lead updated'] }) }, { title: 'Message' });
export const Created = Strict({ id: Uuid(), message: Type.String({ examples: ['Lead created'] }) }, { title: 'Created' });

/** The one error body (CONTRACT §3): a route that declares an error of its own names it with this. */
const errorBody = () => Type.Object({
  error: Type.String({ description: 'What went wrong, in a few words', examples: ['Validation error'] }),
  message: Type.Optional(Type.String({ description: 'What to do about it, when there is more to say' })),
  details: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Each invalid field and what is wrong with it' })),
}, { title: 'Error', examples: [{ error: 'Validation error', details: { email: 'must be a valid email' } }] });
export const ErrorBody = errorBody();
/**
 * The same body, for the errors every route is given by `errorResponses`: the OpenAPI document keeps those only
 * where the route can really answer them (a public route has no 403), and always keeps what a route declares itself.
 */
export const GenericError = errorBody();

/** Error responses a route can give, for the OpenAPI document. */
export const errorResponses = {
  400: GenericError,
  401: GenericError,
  403: GenericError,
  404: GenericError,
  409: GenericError,
  429: GenericError,
};

export const Pagination = Type.Object({
  page: Type.Integer({ minimum: 1 }),
  limit: Type.Integer({ minimum: 1 }),
  total: Type.Integer({ minimum: 0, description: 'Records matching the filters, on every page' }),
  totalPages: Type.Integer({ minimum: 0 }),
}, { title: 'Pagination' });

export const Paginated = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), pagination: Pagination });

/** One responsive variant of an uploaded image (WebP). */
export const ImageVariant = Strict({
  width: Type.Integer({ description: 'Width in pixels' }),
  path: Type.String({ description: 'Site-relative path: `/uploads/<name>`' }),
  url: Type.String({ description: 'Absolute URL (BASE_URL)' }),
}, { title: 'ImageVariant' });

/** What an uploaded image offers a page: its size, its variants and a ready `srcset` (the variants and the original). */
export const ImageVariants = Strict({
  path: Type.String({ description: 'The original, as stored in image fields' }),
  url: Type.String(),
  width: Type.Integer({ description: 'Width of the original in pixels (upright)' }),
  height: Type.Integer({ description: 'Height of the original in pixels (upright)' }),
  variants: Type.Array(ImageVariant, { description: 'WebP copies 320, 640, 1280 and 1920 pixels wide, only those narrower than the original' }),
  srcset: Type.String({ description: 'For `<img srcset>`: every variant and the original with their widths', examples: ['https://example.com/uploads/0f…-320.webp 320w, https://example.com/uploads/0f….jpg 800w'] }),
}, { title: 'ImageVariants', description: 'The variants of the uploaded image the field names; null when it names no upload (an external URL)' });

/** The sibling of an image field: its variants when it names an upload, else null. */
export const ImageVariantsOf = () => Nullable(ImageVariants);
