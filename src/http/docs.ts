import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';

/** `GET /api/openapi.json` generated from the route schemas and `GET /api/docs`, an interactive reference. */
export async function registerDocs(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Property Management Service',
        version: '1.0.0',
        description: 'Back end of the real-estate web application: cms, crm and iam modules.',
      },
      servers: [{ url: app.config.baseUrl }],
      components: {
        securitySchemes: {
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'better-auth.session_token' },
          bearer: { type: 'http', scheme: 'bearer' },
          metricsToken: { type: 'http', scheme: 'bearer', description: 'METRICS_TOKEN, for GET /api/metrics (Prometheus)' },
        },
      },
      security: [{ sessionCookie: [] }, { bearer: [] }],
    },
    hideUntagged: true,
  });
  app.get('/api/openapi.json', { config: { rateLimit: false }, schema: { hide: true } }, async () => app.swagger());
  await app.register(apiReference, {
    routePrefix: '/api/docs',
    configuration: { url: '/api/openapi.json', title: 'Property Management Service API' },
    logLevel: 'warn',
    // The plugin's option type lags its documented `configuration` options: library boundary.
  } as any);
}
