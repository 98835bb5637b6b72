import type { App } from '../../types.js';
import { moduleRoutes } from '../../auth/guard.js';
import { trashRoutes } from '../../http/trash-routes.js';
import amenityRoutes from './amenities.js';
import articleRoutes from './articles.js';
import careerRoutes from './careers.js';
import projectRoutes from './projects.js';
import cmsStatsRoutes from './stats.js';

/** The cms module: every route inside is guarded by the cms permissions. */
export default moduleRoutes('cms', async (app: App) => {
  await app.register(projectRoutes);
  await app.register(articleRoutes);
  await app.register(careerRoutes);
  await app.register(amenityRoutes);
  await app.register(cmsStatsRoutes);
  // Last: the trash lists the resources registered above.
  await app.register(trashRoutes('cms'));
});
