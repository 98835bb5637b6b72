import Fastify from 'fastify';
import pg from 'pg';

/**
 * The bare baseline the service is measured beside: Fastify and `pg` reading the very same `leads` table with the
 * very same query, no authentication, no validation beyond numbers, no audit. DATABASE_URL, PORT.
 *   GET /leads?status=new&page=3&limit=10[&total=1]
 *   GET /stats: the lead figures of the crm dashboard, as grouped counts
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify({ logger: false });

const PAGE = `select id, first_name, last_name, email, phone, source, status, interest, notes, assigned_to, created_at, updated_at
  from leads where status = $1 order by created_at desc, id desc limit $2 offset $3`;
const COUNT = 'select count(*)::int as total from leads where status = $1';

app.get<{ Querystring: { status?: string; page?: string; limit?: string; total?: string } }>('/leads', async (request) => {
  const status = request.query.status ?? 'new';
  const page = Number(request.query.page ?? 1);
  const limit = Number(request.query.limit ?? 10);
  const [rows, counted] = await Promise.all([
    pool.query(PAGE, [status, limit, (page - 1) * limit]),
    request.query.total ? pool.query(COUNT, [status]) : undefined,
  ]);
  return { data: rows.rows, ...(counted ? { total: counted.rows[0].total } : {}) };
});
// The lead figures of GET /api/crm/stats, counted on every request the plain way: grouped counts.
const BY_STATUS = 'select status, count(*)::int as n from leads group by status';
const BY_SOURCE = 'select source, count(*)::int as n from leads group by source';
const PER_DAY = `select date_trunc('day', created_at at time zone 'UTC') as day, count(*)::int as n from leads
  where created_at >= $1 group by 1 order by 1`;
app.get('/stats', async () => {
  const from = new Date(Date.now() - 29 * 24 * 3600 * 1000);
  from.setUTCHours(0, 0, 0, 0);
  const [status, source, days] = await Promise.all([pool.query(BY_STATUS), pool.query(BY_SOURCE), pool.query(PER_DAY, [from])]);
  return { by_status: status.rows, by_source: source.rows, per_day: days.rows };
});
app.get('/health', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 3100), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
