import { createHash } from 'node:crypto';
import etag from '@fastify/etag';
import { clock } from '../../clock.js';
import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { and } from 'drizzle-orm';
import type { App } from '../../types.js';
import { allOf, is } from '../../data/filters.js';
import { selectView } from '../../data/list.js';
import type { Resource, View } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { users } from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import { listQuerySchema } from '../../http/list-query.js';
import { named, pascal } from '../../http/openapi.js';
import { errorResponses, Paginated, Strict, Uuid } from '../../http/schemas.js';
import { renderMarkdown } from '../../mail/markdown.js';
import { withResourceImages } from '../../media/library.js';
import { Amenity, amenityResource } from '../cms/amenities.js';
import { ArticleDetail, ArticleListItem, articlePublishing, articleResource } from '../cms/articles.js';
import { CareerDetail, CareerListItem, careerPublishing, careerResource } from '../cms/careers.js';
import type { Publishing } from '../cms/content.js';
import { ProjectDetail, ProjectListItem, projectPublishing, projectResource, withGalleries } from '../cms/projects.js';

/** Answers a CDN may keep briefly; the ETag lets browsers and CDNs revalidate for free. */
const CACHE_CONTROL = 'public, max-age=60, stale-while-revalidate=300';
/** Publication is time-based: totals are recomputed at least this often even when nothing was written. */
const CLOCK_STEP_MS = 10_000;

type Published = {
  path: string;
  resource: Resource;
  publishing: Publishing;
  ListItem: TSchema;
  Detail: TSchema;
  /** The detail as the public sees it, when it differs from the staff's (no author e-mail). */
  detailView?: View;
  /** Filters the public does not get (e.g. `published`, meaningless here). */
  hiddenFilters?: string[];
  /** Adds to a detail (a project's galleries). */
  complete?: (db: Executor, row: Record<string, unknown>) => Promise<Record<string, unknown>>;
  /**
   * Adds what is derived from the detail alone and costly (an article's rendered HTML): done after the ETag is
   * decided from the rest, so a revalidation that ends in 304 never pays for it.
   */
  derive?: (answer: Record<string, unknown>) => Promise<Record<string, unknown>>;
};

/**
 * The ETag of a detail whose derived fields are left out: they follow from the rest, so the rest names the answer
 * (the derivation's version is part of it, for when the rendering changes). Weak, as the plugin's own.
 */
const DERIVED_VERSION = 'markdown-1';
const etagOf = (answer: Record<string, unknown>) => `W/"${createHash('sha1').update(DERIVED_VERSION).update(JSON.stringify(answer)).digest('base64')}"`;
const matches = (ifNoneMatch: string | undefined, etag: string) =>
  !!ifNoneMatch && ifNoneMatch.split(',').some((tag) => tag.trim() === etag || `W/${tag.trim()}` === etag || tag.trim() === '*');

/** Only records that are published with a publish date that has come (CONTRACT §9). */
const visible = (p: Publishing, now: Date) => allOf([is.equal(p.published, true), is.onOrBefore(p.publishDate, now)])!;

function registerPublished(app: App, p: Published) {
  const tags = ['public'];
  const { db } = app.database;
  const plural = p.resource.name;
  const Name = pascal(p.resource.label);
  // The staff's schemas are named already where the public sees the same; what differs is named for the public.
  if (!p.Detail.title) named(`Public${Name}`, p.Detail);
  app.get(p.path, {
    schema: {
      operationId: `listPublished${pascal(plural)}`, tags, security: [], summary: `Published ${plural}`,
      querystring: listQuerySchema(p.resource, { hiddenFilters: p.hiddenFilters }), response: { 200: named(`Published${Name}Page`, Paginated(p.ListItem)), ...errorResponses },
    },
  }, async (request, reply) => {
    const now = clock.now().getTime();
    reply.header('cache-control', CACHE_CONTROL);
    // Rows are exact to the moment; a cached total may lag a scheduled publication by one clock step.
    const page = await app.lists.page(p.resource, request.query, { scope: visible(p.publishing, new Date(now)), scopeKey: `public:${Math.floor(now / CLOCK_STEP_MS)}` });
    return { ...page, data: await withResourceImages(db, app.config.baseUrl, p.resource, page.data) };
  });

  app.get(`${p.path}/:slug`, {
    schema: { operationId: `getPublished${Name}`, tags, security: [], summary: `One published record of ${plural} by slug`, params: Strict({ slug: Type.String({ minLength: 1, maxLength: 200 }) }), response: { 200: p.Detail, ...errorResponses } },
  }, async (request, reply) => {
    const [row] = await selectView(db, p.resource.table, p.detailView ?? p.resource.view)
      .where(and(is.equal(p.publishing.slug, request.params.slug).sql, visible(p.publishing, clock.now()).sql)).limit(1);
    if (!row) throw notFound('Published record');
    reply.header('cache-control', CACHE_CONTROL);
    const [answer] = await withResourceImages(db, app.config.baseUrl, p.resource, [p.complete ? await p.complete(db, row) : row]);
    if (!p.derive) return answer;
    const etag = etagOf(answer);
    reply.header('etag', etag);
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return p.derive(answer);
  });
}

/** The public author: a name, never an e-mail address. */
const PublicAuthor = Type.Union([Strict({ id: Uuid(), name: Type.String() }), Type.Null()]);
const PublicArticleDetail = Type.Object({
  ...ArticleDetail.properties,
  author: PublicAuthor,
  content_html: Type.String({ description: 'The Markdown content rendered to sanitised HTML (no scripts, styles or event handlers; http, https and mailto links only): safe to insert into a page' }),
}, { additionalProperties: false });
const publicArticleDetailView: View = { ...articleResource.view, fields: { ...articleResource.view.fields, author: { id: users.id, name: users.name } } };

/** Published projects, articles and careers, and amenities, for the company's website. */
export default async function publicContentRoutes(app: App) {
  await app.register(etag, { weak: true });
  app.addHook('onRoute', (route) => void (route.config = { ...route.config, revalidates: true }));
  registerPublished(app, {
    path: '/api/public/projects', resource: projectResource, publishing: projectPublishing, ListItem: ProjectListItem, Detail: ProjectDetail,
    complete: withGalleries, hiddenFilters: ['published'],
  });
  registerPublished(app, {
    path: '/api/public/articles', resource: articleResource, publishing: articlePublishing, ListItem: ArticleListItem, Detail: PublicArticleDetail,
    detailView: publicArticleDetailView, hiddenFilters: ['published'],
    derive: async (answer) => ({ ...answer, content_html: await renderMarkdown(String(answer.content ?? '')) }),
  });
  registerPublished(app, {
    path: '/api/public/careers', resource: careerResource, publishing: careerPublishing, ListItem: CareerListItem, Detail: CareerDetail,
    hiddenFilters: ['published'],
  });
  app.get('/api/public/amenities', {
    schema: { tags: ['public'], security: [], summary: 'All amenities, ordered by name', response: { 200: Strict({ data: Type.Array(Amenity) }), ...errorResponses } },
  }, async (_request, reply) => {
    reply.header('cache-control', CACHE_CONTROL);
    const { data } = await app.lists.whole<Record<string, unknown>>(amenityResource);
    return { data: (await withResourceImages(app.database.db, app.config.baseUrl, amenityResource, data)) as Static<typeof Amenity>[] };
  });
}
