import type { App } from '../../types.js';

type Method = 'GET' | 'POST' | 'PATCH';

/**
 * Requests to the in-process app, as a client would send them: `headers` say who (a session, a visitor's browser),
 * `remoteAddress` from where. Any answer but 2xx throws, naming the request and the service's answer.
 */
export function apiClient(app: App, headers: Record<string, string>, remoteAddress?: string) {
  const send = async <T>(method: Method, url: string, payload?: object | Buffer, extra: Record<string, string> = {}): Promise<T> => {
    const res = await app.inject({ method, url, payload, headers: { ...headers, ...extra }, ...(remoteAddress ? { remoteAddress } : {}) });
    if (res.statusCode >= 300) throw new Error(`${method} ${url.split('?')[0]} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    return res.json<T>();
  };
  return {
    get: <T>(url: string) => send<T>('GET', url),
    post: <T = { id: string }>(url: string, body?: object) => send<T>('POST', url, body),
    patch: (url: string, body: object) => send<{ message: string }>('PATCH', url, body),
    /** `POST /api/uploads` with the image as the multipart field `file` (the body built by the platform's FormData). */
    async upload(image: Buffer, filename: string): Promise<{ path: string }> {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(image)], { type: 'image/jpeg' }), filename);
      const request = new Request('http://seed.invalid/', { method: 'POST', body: form });
      return send('POST', '/api/uploads', Buffer.from(await request.arrayBuffer()), { 'content-type': request.headers.get('content-type')! });
    },
  };
}

export type Api = ReturnType<typeof apiClient>;
