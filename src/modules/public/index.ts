import type { App } from '../../app.js';
import unsubscribeRoutes from './unsubscribe.js';

/** The public website API: no session, rate-limited per IP (CONTRACT §9). */
export default async function publicRoutes(app: App) {
  await app.register(unsubscribeRoutes);
}
