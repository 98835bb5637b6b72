import type { App } from '../../types.js';
import publicContentRoutes from './content.js';
import publicFormRoutes from './forms.js';
import unsubscribeRoutes from './unsubscribe.js';

/** The public website API: no session, rate-limited per IP (CONTRACT §9). */
export default async function publicRoutes(app: App) {
  await app.register(publicContentRoutes);
  await app.register(publicFormRoutes);
  await app.register(unsubscribeRoutes);
}
