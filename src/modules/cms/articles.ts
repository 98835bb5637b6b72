import { Type } from '@sinclair/typebox';
import { arrayContains, eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { ARTICLE_TYPES, articles, users } from '../../db/schema/index.js';
import { currentPrincipal } from '../../auth/guard.js';
import { findOne } from '../../http/crud.js';
import type { ListSpec, View } from '../../http/list.js';
import { Nullable, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { type ContentCollection, publishingInput, registerContentRoutes, SlugInput } from './content.js';

export const articleCollection: ContentCollection = {
  table: articles, id: articles.id, module: 'cms', resource: 'articles', label: 'Article', slug: articles.slug, slugSource: 'title',
};

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

const listFields = {
  id: Uuid(),
  title: Type.String(),
  slug: Type.String(),
  excerpt: Nullable(Type.String()),
  type: StringEnum(ARTICLE_TYPES),
  cover_image: Nullable(Type.String()),
  author: Nullable(Strict({ id: Uuid(), name: Type.String() })),
  tags: Type.Array(Type.String()),
  published: Type.Boolean(),
  publish_date: Nullable(Timestamp()),
  created_at: Timestamp(),
};

/** An article in lists: no content, SEO fields or updated_at. */
export const ArticleListItem = Strict(listFields);

export const ArticleDetail = Strict({
  ...listFields,
  content: Type.String(),
  author: Nullable(Strict({ id: Uuid(), name: Type.String(), email: Type.String() })),
  seo_title: Nullable(Type.String()),
  seo_description: Nullable(Type.String()),
  updated_at: Timestamp(),
});

export const ArticleInput = Strict({
  title: RequiredText(),
  slug: Type.Optional(SlugInput()),
  content: Type.String({ minLength: 1, maxLength: 200_000 }),
  excerpt: Type.Optional(Nullable(Text({ maxLength: 1000 }))),
  type: StringEnum(ARTICLE_TYPES),
  cover_image: Type.Optional(Nullable(RequiredText())),
  tags: Type.Optional(Type.Array(RequiredText({ maxLength: 100 }), { maxItems: 50, uniqueItems: true })),
  seo_title: Type.Optional(Nullable(RequiredText())),
  seo_description: Type.Optional(Nullable(Text({ maxLength: 1000 }))),
  ...publishingInput,
});

// ── Lists and views ───────────────────────────────────────────────────────────────────────────────────────

export const articleList: ListSpec = {
  collection: 'articles',
  table: articles,
  id: articles.id,
  sortable: { created_at: articles.created_at, title: articles.title, publish_date: articles.publish_date },
  defaultSort: 'created_at',
  filters: {
    type: { schema: StringEnum(ARTICLE_TYPES), where: (v) => eq(articles.type, v) },
    published: { schema: Type.Boolean(), where: (v) => eq(articles.published, v) },
    tag: { schema: Type.String({ minLength: 1, maxLength: 100 }), where: (v) => arrayContains(articles.tags, [v]) },
  },
  search: [articles.title, articles.excerpt],
};

const withAuthor = (query: any) => query.leftJoin(users, eq(users.id, articles.author_id));

const listColumns = {
  id: articles.id, title: articles.title, slug: articles.slug, excerpt: articles.excerpt, type: articles.type,
  cover_image: articles.cover_image, author: { id: users.id, name: users.name }, tags: articles.tags,
  published: articles.published, publish_date: articles.publish_date, created_at: articles.created_at,
};

export const articleListView: View = { fields: listColumns, joins: withAuthor };

export const articleDetailView: View = {
  fields: {
    ...listColumns,
    content: articles.content,
    author: { id: users.id, name: users.name, email: users.email },
    seo_title: articles.seo_title, seo_description: articles.seo_description, updated_at: articles.updated_at,
  },
  joins: withAuthor,
};

/** An article in its detail view, or 404. */
export function articleDetail(db: Executor, id: string) {
  return findOne<Record<string, any>>(db, articleCollection, articleDetailView, id);
}

/** Markdown → plain text, roughly: what an excerpt shows. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s*([-*_]\s*){3,}$/gm, ' ')
    .replace(/(\*\*|__|~~|[*_`])/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export const excerptOf = (content: string) => plainText(content).slice(0, 200).trim();

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function articleRoutes(app: App) {
  registerContentRoutes(app, {
    path: '/api/cms/articles',
    collection: articleCollection,
    list: articleList,
    listView: articleListView,
    ListItem: ArticleListItem,
    Detail: ArticleDetail,
    detail: articleDetail,
    Input: ArticleInput,
    createDefaults: async (request, body) => ({
      author_id: (await currentPrincipal(app, request)).user.id,
      ...(body.excerpt === undefined ? { excerpt: excerptOf(body.content) || null } : {}),
    }),
  });
}
