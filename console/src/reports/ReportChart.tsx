import { Box, Card, CardContent, FormControlLabel, Switch, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { visuallyHidden } from '@mui/utils';
import { BarChart } from '@mui/x-charts/BarChart';
import { useId, useState } from 'react';
import { ScrollX } from '../shared/ScrollX';
import { type ChartSpec, formatted, type ReportAnswer } from './definitions';

/** Room per category (a group of bars): past what the screen holds, the chart scrolls sideways in its own region. */
const PER_CATEGORY = 64;
const PER_ROW = 34;
/** The console's own colours (theme.ts: primary, then darker tones that keep 3:1 against white beside each other). */
const COLOURS = ['#1565c0', '#ef6c00', '#2e7d32', '#6a1b9a', '#00838f', '#ad1457', '#5d4037'];

/**
 * One chart of a report, named and described for a screen reader, with "Show as table": the same figures as a table
 * (caption, header cells). Printed, both show.
 */
export function ReportChart({ spec, answer }: { spec: ChartSpec; answer: ReportAnswer }) {
  const [asTable, setAsTable] = useState(false);
  const id = useId();
  const title = spec.title(answer);
  const description = spec.describe(answer);
  const table = spec.table(answer);
  const plotted = table.columns.map((column, index) => ({ column, index })).filter(({ column }) => column.plotted);
  const categories = table.rows.map((row) => row.label);
  // One series over few bars: each bar says its figure.
  const labelled = plotted.length === 1 && categories.length <= 12;
  const series = plotted.map(({ column, index }) => ({
    label: column.label,
    stack: column.stack,
    data: table.rows.map((row) => row.values[index]),
    valueFormatter: (value: number | null) => formatted(value, column.format),
    ...(labelled ? {
      barLabel: (item: { value: number | null; dataIndex: number }) => (spec.barLabel ? spec.barLabel(table.rows[item.dataIndex].values) : formatted(item.value, column.format)),
      barLabelPlacement: 'outside' as const,
    } : {}),
  }));
  // A share is drawn in percent of 1; everything else as it is.
  const shares = plotted.every(({ column }) => column.format === 'share');
  const horizontal = !!spec.horizontal;
  const bandAxis = [{ scaleType: 'band' as const, data: categories, id: 'categories' }];
  const counts = plotted.every(({ column }) => column.format === 'count');
  const valueAxis = [{
    id: 'values',
    min: 0,
    ...(shares ? { max: 1, valueFormatter: (value: number) => formatted(value, 'share') } : {}),
    // Whole steps for counts; room above the highest bar for its label.
    ...(counts ? { tickMinStep: 1 } : {}),
    ...(labelled && !shares ? { domainLimit: (_: unknown, max: unknown) => ({ min: 0, max: Math.max(1, Number(max) * 1.12) }) } : {}),
  }];
  return (
    <Card component="section" aria-labelledby={`${id}-title`} className="report-chart" sx={{ breakInside: 'avoid' }}>
      <CardContent>
        <Box sx={{ display: 'flex', flexWrap: 'wrap', alignItems: 'center', justifyContent: 'space-between', gap: 1 }}>
          <Typography id={`${id}-title`} variant="subtitle1" component="h2">{title}</Typography>
          <FormControlLabel
            className="report-chrome"
            control={<Switch checked={asTable} onChange={(event) => setAsTable(event.target.checked)} />}
            label={<>Show as table<Box component="span" sx={visuallyHidden}> ({title})</Box></>}
          />
        </Box>
        <Typography variant="body2" color="text.secondary" id={`${id}-description`} sx={{ mb: 1 }}>{description}</Typography>
        <Box className={asTable ? 'report-when-printed' : undefined} sx={{ display: asTable ? 'none' : 'block' }}>
          <ScrollX label={`${title}: chart`}>
            {/* The chart as one image, named and described; its figures are in the table beside it. */}
            <Box role="img" aria-label={title} aria-describedby={`${id}-description`} sx={{ minWidth: horizontal ? 520 : Math.max(280, categories.length * PER_CATEGORY * Math.max(1, plotted.filter((p) => !p.column.stack).length / 2)) }}>
              <BarChart
                height={horizontal ? Math.max(200, categories.length * PER_ROW + 90) : 300}
                layout={horizontal ? 'horizontal' : 'vertical'}
                xAxis={horizontal ? valueAxis : bandAxis}
                yAxis={horizontal ? [{ ...bandAxis[0], width: 210 }] : valueAxis}
                series={series}
                colors={COLOURS}
                hideLegend={series.length < 2}
                skipAnimation
              />
            </Box>
          </ScrollX>
        </Box>
        <Box className={asTable ? undefined : 'report-when-printed'} sx={{ display: asTable ? 'block' : 'none' }}>
          <ScrollX label={`${title}: table`}>
            <Table size="small">
              <caption>{title}, {answer.range.from} to {answer.range.to}</caption>
              <TableHead>
                <TableRow>
                  <TableCell component="th" scope="col">{spec.rowHeader(answer)}</TableCell>
                  {table.columns.map((column) => <TableCell key={column.label} component="th" scope="col" align="right">{column.label}</TableCell>)}
                </TableRow>
              </TableHead>
              <TableBody>
                {table.rows.map((row, index) => (
                  <TableRow key={`${row.label}-${index}`}>
                    <TableCell component="th" scope="row">{row.label}</TableCell>
                    {row.values.map((value, column) => <TableCell key={table.columns[column].label} align="right">{formatted(value, table.columns[column].format)}</TableCell>)}
                  </TableRow>
                ))}
              </TableBody>
            </Table>
          </ScrollX>
        </Box>
      </CardContent>
    </Card>
  );
}

