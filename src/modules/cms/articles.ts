import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { contains, anyOf, equals } from '../../data/filters.js';
import { defineResource, type SelectQuery } from '../../data/resource.js';
import { ARTICLE_TYPES, articles, users } from '../../db/schema/index.js';
import { ImageVariantsOf, Nullable, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { contentRoutes, type Publishing, publishingInput, SlugInput } from './content.js';

const withAuthor = (query: SelectQuery) => query.leftJoin(users, eq(users.id, articles.author_id));

const listColumns = {
  id: articles.id, title: articles.title, slug: articles.slug, excerpt: articles.excerpt, type: articles.type,
  cover_image: articles.cover_image, author: { id: users.id, name: users.name }, tags: articles.tags,
  published: articles.published, publish_date: articles.publish_date, created_at: articles.created_at,
};

/** Articles: news, blog posts and announcements, written in Markdown. */
export const articleResource = defineResource({
  name: 'articles',
  module: 'cms',
  label: 'Article',
  table: articles,
  id: articles.id,
  view: {
    fields: {
      ...listColumns,
      content: articles.content,
      author: { id: users.id, name: users.name, email: users.email },
      seo_title: articles.seo_title, seo_description: articles.seo_description, updated_at: articles.updated_at,
    },
    joins: withAuthor,
  },
  // Lists show no content, SEO fields or updated_at.
  listView: { fields: listColumns, joins: withAuthor },
  list: {
    sortable: { created_at: articles.created_at, title: articles.title, publish_date: articles.publish_date },
    defaultSort: 'created_at',
    filters: {
      type: anyOf(articles.type, StringEnum(ARTICLE_TYPES)),
      published: equals(articles.published, Type.Boolean()),
      tag: contains(articles.tags, Type.String({ minLength: 1, maxLength: 100 })),
    },
    search: [articles.title, articles.excerpt],
  },
  images: { cover_image: 'cover_image_variants' },
});

export const articlePublishing: Publishing = { slug: articles.slug, published: articles.published, publishDate: articles.publish_date, slugSource: 'title' };

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

const listFields = {
  id: Uuid(),
  title: Type.String(),
  slug: Type.String(),
  excerpt: Nullable(Type.String()),
  type: StringEnum(ARTICLE_TYPES),
  cover_image: Nullable(Type.String()),
  cover_image_variants: ImageVariantsOf(),
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

/**
 * Markdown → plain text, roughly: what an excerpt shows. Every pattern is linear in its input (no class that can run
 * over the character that starts the next attempt), so 200,000 characters of `<`, `[` or `![` cost milliseconds
 * (CONTRACT §13).
 */
export function plainText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, ' ')
    .replace(/<[^<>]+>/g, ' ')
    .replace(/!\[([^[\]]*)\]\([^()]*\)/g, '$1')
    .replace(/\[([^[\]]*)\]\([^()]*\)/g, '$1')
    .replace(/^\s{0,3}(#{1,6}|>+|[-*+]|\d+[.)])\s+/gm, '')
    .replace(/^\s*([-*_]\s*){3,}$/gm, ' ')
    .replace(/(\*\*|__|~~|[*_`])/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

export const excerptOf = (content: string) => plainText(content).slice(0, 200).trim();

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function articleRoutes(app: App) {
  contentRoutes(app, articleResource, articlePublishing, {
    path: '/api/cms/articles',
    Item: ArticleDetail,
    ListItem: ArticleListItem,
    Input: ArticleInput,
    // The author is the creating user; the excerpt, unless sent, comes from the content.
    defaults: (body, { actor }) => ({
      author_id: actor.userId,
      ...(body.excerpt === undefined ? { excerpt: excerptOf(body.content) || null } : {}),
    }),
  });
}
