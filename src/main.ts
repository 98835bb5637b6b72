import { ConfigError, loadConfig, loadDotEnv } from './config.js';

/** Process entry: config → database → migrations → app → listen → signals. */
async function main() {
  loadDotEnv();
  let config;
  try {
    config = loadConfig(process.env, { stdoutIsTTY: process.stdout.isTTY === true });
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`Configuration error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }

  // The rest of the service loads once the configuration is known to be good: a bad one is refused at once.
  const [{ buildApp }, { applySecretRotation }, { claimPglite }, { openDatabase }, { ensureFirstAdmin }] = await Promise.all([
    import('./app.js'), import('./auth/secret.js'), import('./cli/pglite-owner.js'), import('./db/client.js'), import('./modules/iam/users.js'),
  ]);
  if (!config.databaseUrl) claimPglite(config.dataDir);
  const database = await openDatabase({ url: config.databaseUrl, dataDir: `${config.dataDir}/pglite` });
  await database.migrate();
  const app = await buildApp({ config, database });
  database.onError = (err) => app.log.error({ err }, 'database connection error');
  // A promise some library dropped (pg-boss records a job's completion without awaiting it, so a database timeout
  // there rejected with nobody listening) is logged: by default Node would end the process, and every request with it.
  process.on('unhandledRejection', (reason) => app.log.error({ err: reason }, 'unhandled promise rejection; the service keeps running'));
  const rotation = await applySecretRotation(database, config);
  if (rotation.sessions || rotation.apiTokens) app.log.warn({ sessions: rotation.sessions, apiTokens: rotation.apiTokens }, 'AUTH_SECRET changed: all sessions ended and all API tokens revoked');
  if (rotation.twoFactorReencrypted) app.log.info({ count: rotation.twoFactorReencrypted }, 'two-factor secrets re-encrypted with the new AUTH_SECRET');
  if (rotation.twoFactorUnreadable) {
    app.log.warn({ count: rotation.twoFactorUnreadable }, 'two-factor secrets encrypted with an unknown former AUTH_SECRET: add it to AUTH_SECRET_PREVIOUS and restart, or turn two-factor off for those users (npm run admin -- disable-2fa)');
  }
  await ensureFirstAdmin(database, config, app.log);

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    // Readiness answers 503 from this moment, so a load balancer stops sending while requests in flight finish.
    app.lifecycle.stopping = true;
    app.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      app.log.error('requests still in flight after 10 s; exiting');
      process.exit(1);
    }, 10_000);
    force.unref();
    try {
      await app.close();
      await database.close();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'error during shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  await app.listen({ port: config.port, host: config.host });
  app.log.info({ database: database.kind, baseUrl: config.baseUrl }, 'service ready');
}

main().catch((err) => {
  process.stderr.write(`Start-up failed: ${err?.stack ?? err}\n`);
  process.exit(1);
});
