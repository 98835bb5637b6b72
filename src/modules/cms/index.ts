import type { App } from '../../app.js';
import { moduleRoutes } from '../../auth/guard.js';
import amenityRoutes from './amenities.js';

/** The cms module: every route inside is guarded by the cms permissions. */
export default moduleRoutes('cms', async (app: App) => {
  await app.register(amenityRoutes);
});
