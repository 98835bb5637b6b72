import { Type } from '@sinclair/typebox';
import { asc } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { amenities } from '../../db/schema/index.js';
import { type Collection, createRecord, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { Created, errorResponses, IdParams, Message, Nullable, PartialStrict, RequiredText, Strict, Text, Timestamp, Uuid } from '../../http/schemas.js';

const collection: Collection = { table: amenities, id: amenities.id, module: 'cms', resource: 'amenities', label: 'Amenity' };

export const Amenity = Strict({
  id: Uuid(),
  name: Type.String(),
  description: Nullable(Type.String()),
  icon: Nullable(Type.String()),
  category: Nullable(Type.String()),
  cover_photo: Nullable(Type.String()),
  created_at: Timestamp(),
});

const AmenityInput = Strict({
  name: RequiredText(),
  description: Type.Optional(Nullable(Text())),
  icon: Type.Optional(Nullable(RequiredText())),
  category: Type.Optional(Nullable(RequiredText())),
  cover_photo: Type.Optional(Nullable(RequiredText())),
});

export const amenityView = {
  fields: {
    id: amenities.id, name: amenities.name, description: amenities.description, icon: amenities.icon,
    category: amenities.category, cover_photo: amenities.cover_photo, created_at: amenities.created_at,
  },
};

/** Every amenity, ordered by name: the staff list and the public one. */
export const allAmenities = (db: Executor) => db.select(amenityView.fields).from(amenities).orderBy(asc(amenities.name), asc(amenities.id));

/** Amenities: a short catalogue, listed whole and ordered by name (CONTRACT §8). */
export default async function amenityRoutes(app: App) {
  app.get('/api/cms/amenities', {
    schema: { summary: 'All amenities, ordered by name', querystring: Strict({}), response: { 200: Strict({ data: Type.Array(Amenity) }), ...errorResponses } },
  }, async () => ({ data: await allAmenities(app.database.db) }));

  app.get('/api/cms/amenities/:id', {
    schema: { summary: 'One amenity', params: IdParams, response: { 200: Amenity, ...errorResponses } },
  }, async (request) => findOne(app.database.db, collection, amenityView, request.params.id));

  app.post('/api/cms/amenities', {
    schema: { summary: 'Create an amenity', body: AmenityInput, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const row = await createRecord(app, request, collection, request.body);
    return reply.code(201).send({ id: row.id, message: 'Amenity created' });
  });

  app.patch('/api/cms/amenities/:id', {
    schema: { summary: 'Update an amenity (only the fields sent)', params: IdParams, body: PartialStrict(AmenityInput), response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await updateRecord(app, request, collection, request.params.id, request.body);
    return { message: 'Amenity updated' };
  });

  app.delete('/api/cms/amenities/:id', {
    schema: { summary: 'Delete an amenity', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, collection, request.params.id);
    return { message: 'Amenity deleted' };
  });
}
