# syntax=docker/dockerfile:1
# The service's image: a build stage with the development dependencies compiles the server (dist/) and the staff
# console (console/dist); the runtime stage holds only what runs, with the production dependencies.
# scripts/check-production.sh performs both stages outside a container (CI has no container runtime) and fails when
# this file's runtime COPY lines, install or command differ from what it checks.

ARG NODE_VERSION=22

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /app
# The manifests first: the dependency layer is rebuilt only when they change, not on every source edit.
COPY package.json package-lock.json ./
COPY console/package.json console/
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
COPY . .
RUN npm run build

FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
# --legacy-peer-deps: better-auth names vitest as an optional peer, and npm keeps an optional peer that is also a
# development dependency (vitest, and through it vite, esbuild…) even with --omit=dev; without peer resolution the
# install is exactly the production dependencies of the lock file. The console's workspace is absent on purpose:
# its packages are bundled into console/dist.
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --legacy-peer-deps --no-audit --no-fund
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/dist ./console/dist
COPY --from=build /app/drizzle ./drizzle
# The embedded database (when DATABASE_URL is unset), the mail outbox and local uploads live in DATA_DIR.
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 3000
# Readiness, not liveness: an instance is healthy once its database answers and its migrations are applied.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT}/api/health/ready`, { signal: AbortSignal.timeout(4000) }).then((res) => process.exit(res.ok ? 0 : 1), () => process.exit(1))"]
# node itself is PID 1: src/main.ts handles SIGTERM (readiness 503, requests in flight finish, exit 0), and its only
# child, the password-hashing process, is its own to reap. No npm in between: npm would have to pass the signal on.
STOPSIGNAL SIGTERM
CMD ["node", "dist/main.js"]
