import Fastify from 'fastify';
import pg from 'pg';

/**
 * The bare baseline the service is measured beside: Fastify and `pg` reading the very same `leads` table with the
 * very same query, no authentication, no validation beyond numbers, no audit. DATABASE_URL, PORT.
 *   GET /leads?status=new&page=3&limit=10[&total=1]
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
app.get('/health', async () => ({ status: 'ok' }));

await app.listen({ port: Number(process.env.PORT ?? 3100), host: '127.0.0.1' });
process.on('SIGTERM', () => void app.close().then(() => pool.end()).then(() => process.exit(0)));
