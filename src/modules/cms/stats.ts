import { type TSchema, Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { countsBy } from '../../data/stats.js';
import { ARTICLE_TYPES, PROJECT_STATUSES } from '../../db/schema/index.js';
import { errorResponses, Strict } from '../../http/schemas.js';
import { articleResource } from './articles.js';
import { careerResource } from './careers.js';
import { projectResource } from './projects.js';
import { named } from '../../http/openapi.js';

const Count = () => Type.Integer({ minimum: 0 });
const CountsOf = (values: readonly string[]) => Strict(Object.fromEntries(values.map((value) => [value, Count()])) as Record<string, TSchema>);
const Publishing = { total: Count(), published: Count(), draft: Count() };

const CmsStats = Strict({
  projects: Strict({ ...Publishing, by_status: CountsOf(PROJECT_STATUSES) }),
  articles: Strict({ ...Publishing, by_type: CountsOf(ARTICLE_TYPES) }),
  careers: Strict(Publishing),
}, {
  description: '`published` counts records marked published (a future publish date still hides them from the website); `draft` the rest',
  examples: [{
    projects: { total: 8, published: 6, draft: 2, by_status: { active: 4, upcoming: 2, completed: 1, 'on-hold': 1 } },
    articles: { total: 40, published: 35, draft: 5, by_type: { news: 20, announcement: 5, blog: 15 } },
    careers: { total: 6, published: 4, draft: 2 },
  }],
});

/** The cms dashboard in one request, guarded by cms read. */
export default async function cmsStatsRoutes(app: App) {
  const { lists } = app;
  /** Published and draft counts of a content resource, exact. */
  const publishing = async (resource: typeof articleResource | typeof careerResource | typeof projectResource) => {
    const [published, draft] = await lists.totalsOf(resource, [{ published: true }, { published: false }]);
    return { total: published + draft, published, draft };
  };

  app.get('/api/cms/stats', {
    schema: { summary: 'Figures for the cms dashboard', description: 'Published and draft counts of projects, articles and careers; projects by status, articles by type.', response: { 200: named('CmsStats', CmsStats), ...errorResponses } },
  }, async () => {
    const [projects, projectsByStatus, articles, articlesByType, careers] = await Promise.all([
      publishing(projectResource),
      countsBy(lists, projectResource, 'status', PROJECT_STATUSES),
      publishing(articleResource),
      countsBy(lists, articleResource, 'type', ARTICLE_TYPES),
      publishing(careerResource),
    ]);
    return { projects: { ...projects, by_status: projectsByStatus }, articles: { ...articles, by_type: articlesByType }, careers };
  });
}
