import type { App } from '../../app.js';

/** The public website API: no session, rate-limited per IP (CONTRACT §9). */
export default async function publicRoutes(_app: App) {}
