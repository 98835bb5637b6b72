import type { App } from '../../app.js';
import { moduleRoutes } from '../../auth/guard.js';

/** The iam module: every route inside is guarded by the iam permissions. */
export default moduleRoutes('iam', async (_app: App) => {});
