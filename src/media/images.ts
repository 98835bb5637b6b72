import sharp, { type Metadata, type Sharp } from 'sharp';

/** Widths of the responsive variants (WebP); only those narrower than the original are made. */
export const VARIANT_WIDTHS = [320, 640, 1280, 1920] as const;

/** Image types accepted (CONTRACT §11), by the extension file-type detects → served Content-Type. */
export const IMAGE_TYPES: Record<string, string> = {
  jpg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  gif: 'image/gif',
  avif: 'image/avif',
};

/** The file is an image type we take, but not one we can use (unreadable, or absurdly large): 400 `details.file`. */
export class ImageRefused extends Error {}

export type Encoded = { buffer: Buffer; width: number; height: number };
export type ProcessedImage = Encoded & { variants: Encoded[] };

// libvips' operation cache keeps decoded inputs for reuse; uploads are each read a few times at most, and a kept
// file handle would pin a deleted temporary file.
sharp.cache({ files: 0, items: 50, memory: 64 });

/**
 * Runs at most `limit` tasks at once; the rest wait their turn. Image work runs on libuv's threads, but a few large
 * images at once would take every thread (file reads, bcrypt…) and the memory of each decoded image.
 */
export class Limiter {
  private active = 0;
  private waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await task();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

const images = new Limiter(2);

/** Animated formats keep their frames (every frame is re-encoded, and resized for the variants). */
const ANIMATED = new Set(['gif', 'webp']);

function encode(image: Sharp, ext: string): Sharp {
  switch (ext) {
    case 'jpg': return image.jpeg({ quality: 88, progressive: true });
    case 'png': return image.png({ compressionLevel: 7 });
    case 'webp': return image.webp({ quality: 88 });
    case 'gif': return image.gif();
    case 'avif': return image.avif({ quality: 60, effort: 2 });
    default: throw new ImageRefused(`cannot be processed: unsupported type ${ext}`);
  }
}

async function output(image: Sharp): Promise<Encoded> {
  const { data, info } = await image.toBuffer({ resolveWithObject: true });
  // An animation's height is that of one frame.
  return { buffer: data, width: info.width, height: (info as { pageHeight?: number }).pageHeight ?? info.height };
}

/**
 * Reads an uploaded image (a file path) of the detected type `ext` and makes what is served of it: the original
 * upright (EXIF orientation applied) and without metadata (no EXIF, GPS, XMP, comments; colours converted to sRGB),
 * re-encoded in its own format; and WebP variants at each of VARIANT_WIDTHS narrower than it (never enlarged).
 * Refuses (ImageRefused) an image of more than `maxPixels` pixels (an animation: all its frames together) before
 * decoding it, and one that cannot be decoded.
 */
export function processImage(file: string, ext: string, maxPixels: number): Promise<ProcessedImage> {
  return images.run(async () => {
    const animated = ANIMATED.has(ext);
    const open = () => sharp(file, { limitInputPixels: maxPixels, animated, failOn: 'error', sequentialRead: true });
    let meta: Metadata;
    try {
      meta = await open().metadata();
    } catch (err) {
      throw refusal(err);
    }
    if (!meta.width || !meta.height) throw new ImageRefused('could not be read as an image');
    // Every frame of an animation is decoded, re-encoded and resized for each variant: all of them count. Opened as
    // an animation, `height` is that of the frames stacked; `pageHeight` is one frame's.
    const frames = animated ? Math.max(1, meta.pages ?? 1) : 1;
    const frameHeight = animated && frames > 1 ? (meta.pageHeight ?? Math.ceil(meta.height / frames)) : meta.height;
    const pixels = meta.width * frameHeight * frames;
    if (pixels > maxPixels) {
      const size = `${meta.width}×${frameHeight} pixels`;
      throw new ImageRefused(`is too large: ${frames > 1 ? `${frames} frames of ${size}` : size}, at most ${maxPixels} pixels are accepted`);
    }
    try {
      // sharp writes no metadata unless asked to (keepMetadata/withMetadata): the output carries none.
      const original = await output(encode(open().autoOrient(), ext));
      const variants: Encoded[] = [];
      for (const width of VARIANT_WIDTHS) {
        if (width >= original.width) break;
        variants.push(await output(open().autoOrient().resize({ width, withoutEnlargement: true }).webp({ quality: 80, effort: 4 })));
      }
      return { ...original, variants };
    } catch (err) {
      throw refusal(err);
    }
  });
}

/** sharp's complaints about the input are the client's; anything else (out of memory…) stays an error of ours. */
function refusal(err: unknown): unknown {
  const message = err instanceof Error ? err.message : String(err);
  if (/pixel limit/i.test(message)) return new ImageRefused('is too large: it has more pixels than are accepted');
  if (/Input (file|buffer)|unsupported image format|corrupt|premature|bad|invalid|VipsJpeg|VipsPng|VipsForeign|gifload|webp|heif|png|jpeg|Image|decode|truncated|read/i.test(message)) {
    return new ImageRefused('could not be read as an image (damaged or incomplete)');
  }
  return err;
}
