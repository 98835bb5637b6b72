import { api } from '../api/http';

/** What POST /api/uploads accepts (it checks the bytes; this only narrows the file chooser). */
export const IMAGE_TYPES = 'image/jpeg,image/png,image/webp,image/gif,image/avif';

/** POST /api/uploads (CONTRACT §11): the stored file's path, as the API's path fields hold it. */
export async function upload(file: File): Promise<{ path: string; url: string }> {
  const form = new FormData();
  form.append('file', file);
  return api('/api/uploads', { method: 'POST', form });
}
