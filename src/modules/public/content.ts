import etag from '@fastify/etag';
import { type TSchema, Type } from '@sinclair/typebox';
import { and, eq, lte } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { articles, careers, projects, users } from '../../db/schema/index.js';
import { notFound } from '../../http/errors.js';
import { listQuerySchema, type ListSpec, selectView, type View } from '../../http/list.js';
import { errorResponses, Paginated, Strict, Uuid } from '../../http/schemas.js';
import { allAmenities, Amenity } from '../cms/amenities.js';
import { ArticleDetail, ArticleListItem, articleDetailView, articleList, articleListView } from '../cms/articles.js';
import { CareerDetail, CareerListItem, careerDetailView, careerList, careerListView } from '../cms/careers.js';
import { galleriesOf, ProjectDetail, ProjectListItem, projectDetailView, projectList, projectListView } from '../cms/projects.js';

/** Answers a CDN may keep briefly; the ETag lets browsers and CDNs revalidate for free. */
const CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=300';
/** Publication is time-based: totals are recomputed at least this often even when nothing was written. */
const CLOCK_STEP_MS = 10_000;

type Published = {
  path: string;
  spec: ListSpec;
  listView: View;
  detailView: View;
  ListItem: TSchema;
  Detail: TSchema;
  published: PgColumn;
  publishDate: PgColumn;
  slug: PgColumn;
  /** Filters the public does not get (e.g. `published`, meaningless here). */
  hiddenFilters?: string[];
  /** Adds to a detail (a project's galleries). */
  complete?: (db: Executor, row: Record<string, any>) => Promise<Record<string, any>>;
};

/** Only records that are published with a publish date that has come (CONTRACT §9). */
const visible = (p: Published, now: Date) => and(eq(p.published, true), lte(p.publishDate, now));

function registerPublished(app: App, p: Published) {
  const filters = Object.fromEntries(Object.entries(p.spec.filters ?? {}).filter(([name]) => !p.hiddenFilters?.includes(name)));
  const base: ListSpec = { ...p.spec, filters };
  const tags = ['public'];
  app.get(p.path, {
    schema: { tags, security: [], summary: `Published ${p.spec.collection}`, querystring: listQuerySchema(base), response: { 200: Paginated(p.ListItem), ...errorResponses } },
  }, async (request, reply) => {
    const now = Date.now();
    reply.header('cache-control', CACHE_CONTROL);
    // Rows are exact to the moment; a cached total may lag a scheduled publication by one clock step.
    const scopeKey = `public:${Math.floor(now / CLOCK_STEP_MS)}`;
    return app.lists.page({ ...base, scope: visible(p, new Date(now)), scopeKey }, p.listView, request.query as any);
  });

  app.get(`${p.path}/:slug`, {
    schema: { tags, security: [], summary: `One published record of ${p.spec.collection} by slug`, params: Strict({ slug: Type.String({ minLength: 1, maxLength: 200 }) }), response: { 200: p.Detail, ...errorResponses } },
  }, async (request, reply) => {
    const [row] = await selectView(app.database.db, p.spec.table, p.detailView).where(and(eq(p.slug, request.params.slug), visible(p, new Date()))).limit(1);
    if (!row) throw notFound('Published record');
    reply.header('cache-control', CACHE_CONTROL);
    return p.complete ? p.complete(app.database.db, row) : row;
  });
}

/** The public author: a name, never an e-mail address. */
const PublicAuthor = Type.Union([Strict({ id: Uuid(), name: Type.String() }), Type.Null()]);
const PublicArticleDetail = Type.Object({ ...(ArticleDetail as any).properties, author: PublicAuthor }, { additionalProperties: false });
const publicArticleDetailView: View = { ...articleDetailView, fields: { ...articleDetailView.fields, author: { id: users.id, name: users.name } } };

/** Published projects, articles and careers, and amenities, for the company's website. */
export default async function publicContentRoutes(app: App) {
  await app.register(etag, { weak: true });
  registerPublished(app, {
    path: '/api/public/projects', spec: projectList, listView: projectListView, detailView: projectDetailView,
    ListItem: ProjectListItem, Detail: ProjectDetail, published: projects.published, publishDate: projects.publish_date, slug: projects.slug,
    complete: async (db, row) => ({ ...row, galleries: await galleriesOf(db, row.id) }),
  });
  registerPublished(app, {
    path: '/api/public/articles', spec: articleList, listView: articleListView, detailView: publicArticleDetailView,
    ListItem: ArticleListItem, Detail: PublicArticleDetail, published: articles.published, publishDate: articles.publish_date, slug: articles.slug,
    hiddenFilters: ['published'],
  });
  registerPublished(app, {
    path: '/api/public/careers', spec: careerList, listView: careerListView, detailView: careerDetailView,
    ListItem: CareerListItem, Detail: CareerDetail, published: careers.published, publishDate: careers.publish_date, slug: careers.slug,
    hiddenFilters: ['published'],
  });
  app.get('/api/public/amenities', {
    schema: { tags: ['public'], security: [], summary: 'All amenities, ordered by name', response: { 200: Strict({ data: Type.Array(Amenity) }), ...errorResponses } },
  }, async (_request, reply) => {
    reply.header('cache-control', CACHE_CONTROL);
    return { data: await allAmenities(app.database.db) };
  });
}
