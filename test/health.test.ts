import { createServer, connect, type Server, type Socket } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { type Database, openDatabase } from '../src/db/client.js';
import { as, createTestApp, createTestDatabase, none, pgliteTemplate, serverUrl, type TestContext } from './helpers.js';

/**
 * A TCP proxy between the service and a real PostgreSQL wire server, to take the database away and bring it back:
 * `stop()` closes every connection and stops listening (connections are refused), `blackhole()` keeps accepting
 * but never answers (a hung server), `start()` listens again on the same port.
 */
class DatabaseProxy {
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  private silent = false;
  port = 0;
  constructor(private readonly target: { host: string; port: number }) {}

  async start(): Promise<void> {
    this.silent = false;
    const server = createServer((client) => {
      this.track(client);
      if (this.silent) return; // accepted, never answered
      const upstream = connect(this.target);
      this.track(upstream);
      const end = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('data', (chunk) => void (this.silent || upstream.write(chunk)));
      upstream.on('data', (chunk) => void (this.silent || client.write(chunk)));
      client.on('close', end).on('error', end);
      upstream.on('close', end).on('error', end);
    });
    await new Promise<void>((resolve, reject) => server.once('error', reject).listen(this.port, '127.0.0.1', () => resolve()));
    this.port = (server.address() as { port: number }).port;
    this.server = server;
  }

  blackhole(): void {
    this.silent = true;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    const closed = server ? new Promise((resolve) => server.close(resolve)) : Promise.resolve();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  private track(socket: Socket) {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
  }
}

let ctx: TestContext;
let proxy: DatabaseProxy;
let proxied: Database;
/** Cleans up whatever the proxy points at: the per-file PostgreSQL database, or the PGlite socket server. */
let closeTarget: () => Promise<void>;
/** The message of every failed ping of the service's database. */
const pingFailures: string[] = [];

beforeAll(async () => {
  let target: { host: string; port: number };
  let url: URL;
  if (serverUrl) {
    // A fresh, migrated database on the PostgreSQL server, reached through the proxy.
    const database = await createTestDatabase();
    url = new URL(database.url!);
    target = { host: url.hostname, port: Number(url.port || 5432) };
    closeTarget = () => database.close();
  } else {
    // No server: PGlite behind its PostgreSQL wire-protocol server, so the service talks to it over TCP as it would
    // to PostgreSQL, and the proxy can cut it off.
    // A copy of the run's migrated template (as every PGlite test database is).
    const pglite = await PGlite.create({ extensions: { pg_trgm }, loadDataDir: await pgliteTemplate() });
    const socketServer = new PGLiteSocketServer({ db: pglite, host: '127.0.0.1', port: 0, maxConnections: 20 });
    await socketServer.start();
    const [host, port] = socketServer.getServerConn().split(':');
    target = { host, port: Number(port) };
    url = new URL(`postgres://postgres@${host}:${port}/postgres`);
    closeTarget = async () => {
      await socketServer.stop();
      await pglite.close();
    };
  }
  proxy = new DatabaseProxy(target);
  await proxy.start();
  url.hostname = '127.0.0.1';
  url.port = String(proxy.port);
  proxied = await openDatabase({ url: url.toString() });
  ctx = await createTestApp({}, { database: proxied });
  // Why each ping failed: what decides the answers below, not how long the machine took to give them.
  const ping = proxied.ping;
  proxied.ping = (ms) => ping(ms).catch((err: Error) => {
    pingFailures.push(err.message);
    throw err;
  });
});

afterAll(async () => {
  await ctx?.close();
  await proxied?.close().catch(() => undefined);
  await proxy?.stop();
  await closeTarget?.();
});

const health = async () => {
  const started = Date.now();
  const res = await as(ctx, none).get('/api/health');
  return { status: res.statusCode, body: res.json(), ms: Date.now() - started };
};

test('health is public and answers 200 {status: ok} while the database answers', async () => {
  const res = await health();
  expect(res.status).toBe(200);
  expect(res.body).toEqual({ status: 'ok' });
  expect(proxied.kind).toBe('postgres');
});

test('database unreachable → 503 {status: unavailable}; back → 200 again', async () => {
  await proxy.stop();
  pingFailures.length = 0;
  const down = await health();
  expect(down.status).toBe(503);
  expect(down.body).toEqual({ status: 'unavailable' });
  // Refused at once, not waited out: the ping failed on the connection, not on its timeout.
  expect(pingFailures).toHaveLength(1);
  expect(pingFailures[0]).not.toMatch(/did not answer/);
  // Still down on a second look (no cached answer), and the process is still serving.
  expect((await health()).status).toBe(503);

  await proxy.start(); // same port
  const up = await health();
  expect(up.status).toBe(200);
  expect(up.body).toEqual({ status: 'ok' });
});

test('database hung (connections accepted, nothing answered) → 503 within the ping timeout; healed → 200', async () => {
  expect((await health()).status).toBe(200);
  proxy.blackhole();
  pingFailures.length = 0;
  const hung = await health();
  expect(hung.status).toBe(503);
  expect(hung.body).toEqual({ status: 'unavailable' });
  // Answered by the ping's own timeout (2 s), not by the pool's connection timeout or a test deadline.
  expect(pingFailures).toEqual(['database did not answer within 2000 ms']);
  expect(hung.ms).toBeGreaterThanOrEqual(1_500);

  // Heal: drop the hung connections and forward again.
  await proxy.stop();
  await proxy.start();
  expect(await health()).toMatchObject({ status: 200, body: { status: 'ok' } });
});
