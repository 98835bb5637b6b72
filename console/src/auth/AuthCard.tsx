import { Alert, Box, Card, CardContent, Typography } from '@mui/material';
import type { ReactNode } from 'react';

/** The frame of the signed-out pages: a heading, an optional message, the form. */
export function AuthCard({ title, message, severity = 'error', children }: { title: string; message?: string; severity?: 'error' | 'success' | 'info'; children: ReactNode }) {
  return (
    <Box component="main" sx={{ minHeight: '100vh', display: 'flex', alignItems: 'center', justifyContent: 'center', bgcolor: 'grey.100', p: 2 }}>
      <Card sx={{ width: '100%', maxWidth: 400 }}>
        <CardContent>
          <Typography variant="overline" component="p" color="text.secondary">Property Management — staff console</Typography>
          <Typography variant="h5" component="h1" gutterBottom>{title}</Typography>
          {message ? <Alert severity={severity} sx={{ mb: 2 }} role={severity === 'error' ? 'alert' : 'status'}>{message}</Alert> : null}
          {children}
        </CardContent>
      </Card>
    </Box>
  );
}
