import { Box, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';

export type RowError = { line: number; field: string | null; message: string };

/** Every bad row of a CSV file: its line (the header is line 1), the column as the file names it, what is wrong. */
export function RowErrorTable({ errors, truncated, label }: { errors: RowError[]; truncated: boolean; label: string }) {
  return (
    <>
      {/* Scrolls on its own (up to 1,000 rows); focusable, so a keyboard can scroll it too. */}
      <Box role="region" aria-label={label} tabIndex={0} sx={{ maxHeight: 360, overflow: 'auto', contain: 'inline-size', '&:focus-visible': { outline: 2, outlineColor: 'primary.main' } }}>
        <Table size="small" stickyHeader aria-label={label}>
          <TableHead>
            <TableRow>
              <TableCell>Line</TableCell>
              <TableCell>Field</TableCell>
              <TableCell>Problem</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {errors.map((error, i) => (
              <TableRow key={`${error.line}-${error.field}-${i}`}>
                <TableCell>{error.line}</TableCell>
                <TableCell>{error.field ?? 'whole row'}</TableCell>
                <TableCell>{error.message}</TableCell>
              </TableRow>
            ))}
          </TableBody>
        </Table>
      </Box>
      {truncated ? <Typography variant="body2" sx={{ mt: 1 }}>Only the first {errors.length.toLocaleString()} problems are listed.</Typography> : null}
    </>
  );
}
