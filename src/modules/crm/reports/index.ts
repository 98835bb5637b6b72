import { Type } from '@sinclair/typebox';
import type { App } from '../../../types.js';
import { ownersOf } from '../../../auth/guard.js';
import { record } from '../../../data/export.js';
import { sendCsv } from '../../../http/csv.js';
import { named, pascal } from '../../../http/openapi.js';
import { errorResponses, Strict, StringEnum } from '../../../http/schemas.js';
import { agentActivityReport } from './agent-activity.js';
import { funnelReport } from './funnel.js';
import { reportInput, type ReportQuery, reportFilters } from './input.js';
import { projectsReport } from './projects.js';
import { type Report, reportSchema } from './report.js';
import { speedToLeadReport } from './speed-to-lead.js';

/** Every sales report, in the order the documentation lists them. */
export const REPORTS: readonly Report[] = [funnelReport, speedToLeadReport, agentActivityReport, projectsReport];

/**
 * The sales reports under /api/crm/reports/{name} (crm read, like every crm route), each also as CSV at
 * /api/crm/reports/{name}/export with the same query: its rows, then a `total` record. Figures cover what the
 * caller's record scope lets them read.
 */
export default async function reportRoutes(app: App) {
  const { db } = app.database;
  for (const report of REPORTS) {
    const Query = Strict({
      ...reportFilters,
      group_by: Type.Optional(StringEnum(report.groupBy, { description: `How rows are grouped; default ${report.defaultGroupBy}` })),
    });
    const Answer = named(`${pascal(report.name)}Report`, reportSchema(report));
    const path = `/api/crm/reports/${report.name}`;
    const run = async (request: { query: unknown }) => {
      const query = request.query as ReportQuery;
      const input = await reportInput(db, query, { timeZone: app.config.taskTimeZone, owners: await ownersOf(app, request as never) });
      const groupBy = query.group_by ?? report.defaultGroupBy;
      return { range: { from: input.from, to: input.to }, group_by: groupBy, ...await report.run(db, input, groupBy) };
    };
    app.get(path, {
      schema: { operationId: report.operation, summary: report.summary, description: report.description, querystring: Query, response: { 200: Answer, ...errorResponses } },
    }, async (request) => run(request));

    const headers = ['key', 'label', ...Object.keys(report.figures)];
    app.get(`${path}/export`, {
      schema: {
        operationId: `export${report.operation.replace(/^get/, '')}`,
        summary: `${report.summary} (CSV)`,
        description: 'The same report as CSV: one record per row, then a record keyed `total` with the totals.',
        querystring: Query,
        response: {
          200: { description: 'CSV file with a header row', content: { 'text/csv': { schema: { type: 'string' }, example: `${headers.join(',')}\r\n` } } },
          ...errorResponses,
        },
      },
    }, async (request, reply) => {
      const answer = await run(request);
      const figures = Object.keys(report.figures);
      const lines = [
        ...answer.rows.map((row) => record([row.key, row.label, ...figures.map((name) => row[name])])),
        record(['total', 'Total', ...figures.map((name) => answer.totals[name])]),
      ];
      return sendCsv(reply, `${report.name}-report`, headers, (async function* () { yield lines.join(''); })());
    });
  }
}
