import type { App } from '../../app.js';
import { moduleRoutes } from '../../auth/guard.js';

/** The crm module: every route inside is guarded by the crm permissions. */
export default moduleRoutes('crm', async (_app: App) => {});
