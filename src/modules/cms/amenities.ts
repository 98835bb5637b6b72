import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { defineResource } from '../../data/resource.js';
import { amenities } from '../../db/schema/index.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { ImageVariantsOf, Nullable, RequiredText, Strict, Text, Timestamp, Uuid } from '../../http/schemas.js';

/** Amenities: a short catalogue, listed whole and ordered by name (CONTRACT §8). */
export const amenityResource = defineResource({
  name: 'amenities',
  module: 'cms',
  label: 'Amenity',
  table: amenities,
  id: amenities.id,
  view: {
    fields: {
      id: amenities.id, name: amenities.name, description: amenities.description, icon: amenities.icon,
      category: amenities.category, cover_photo: amenities.cover_photo, created_at: amenities.created_at,
    },
  },
  list: { sortable: { name: amenities.name }, defaultSort: 'name', whole: true },
  images: { cover_photo: 'cover_photo_variants' },
});

export const Amenity = Strict({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  icon: Nullable(Type.String()),
  category: Nullable(Type.String()),
  cover_photo: Nullable(Type.String()),
  cover_photo_variants: ImageVariantsOf(),
  created_at: Timestamp(),
});

const AmenityInput = Strict({
  name: RequiredText(),
  description: Type.Optional(Nullable(Text())),
  icon: Type.Optional(Nullable(RequiredText())),
  category: Type.Optional(Nullable(RequiredText())),
  cover_photo: Type.Optional(Nullable(RequiredText())),
});

export default async function amenityRoutes(app: App) {
  resourceRoutes(app, amenityResource, { path: '/api/cms/amenities', Item: Amenity, create: { body: AmenityInput } });
}
