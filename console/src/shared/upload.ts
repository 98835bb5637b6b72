import { api } from '../api/http';

/** POST /api/uploads (CONTRACT §11): the stored file's path, as the API's path fields hold it. */
export async function upload(file: File): Promise<{ path: string; url: string }> {
  const form = new FormData();
  form.append('file', file);
  return api('/api/uploads', { method: 'POST', form });
}
