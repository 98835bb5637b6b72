import { Table, TableBody, TableHead, TablePagination, TableRow } from '@mui/material';
import type { ReactNode } from 'react';
import { ScrollX } from './ScrollX';

/**
 * A page of a list as a small table (scrolling sideways on a narrow screen) with its pagination: the trash, the privacy
 * requests. `page` counts from 0, as MUI's pagination does.
 */
export function PagedTable(props: {
  label: string; tableLabel?: string; head: ReactNode; children: ReactNode; total: number; page: number; limit: number;
  onPage: (page: number) => void; onLimit: (limit: number) => void; rowsLabel: string;
}) {
  return (
    <>
      <ScrollX label={props.label}>
        <Table size="small" aria-label={props.tableLabel ?? props.label}>
          <TableHead><TableRow>{props.head}</TableRow></TableHead>
          <TableBody>{props.children}</TableBody>
        </Table>
      </ScrollX>
      <TablePagination
        component="div" count={props.total} page={props.page} onPageChange={(_, next) => props.onPage(next)} rowsPerPage={props.limit}
        rowsPerPageOptions={[10, 25, 50]} onRowsPerPageChange={(event) => { props.onLimit(Number(event.target.value)); props.onPage(0); }} labelRowsPerPage={props.rowsLabel}
      />
    </>
  );
}
