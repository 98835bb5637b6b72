import { Box } from '@mui/material';
import type { ReactNode } from 'react';

/** A wide table that scrolls sideways on a narrow screen; focusable, so a keyboard can scroll it too. */
export function ScrollX({ label, children }: { label: string; children: ReactNode }) {
  return (
    <Box role="region" aria-label={label} tabIndex={0} sx={{ overflowX: 'auto', '&:focus-visible': { outline: 2, outlineColor: 'primary.main' } }}>
      {children}
    </Box>
  );
}
