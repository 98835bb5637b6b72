import { Box } from '@mui/material';
import { Labeled } from 'react-admin';
import { FieldValue } from '../resources/fields';
import type { FieldSpec } from '../resources/types';

/** A record's fields as label and value, in one to four columns as the screen allows. */
export function FieldGrid({ fields, columns = 3 }: { fields: FieldSpec[]; columns?: 2 | 3 | 4 }) {
  return (
    <Box sx={{ display: 'grid', gap: 2, gridTemplateColumns: { xs: '1fr', sm: 'repeat(2, minmax(0, 1fr))', lg: `repeat(${columns}, minmax(0, 1fr))` } }}>
      {fields.map((field) => (
        <Labeled key={`${field.source}-${field.type}`} label={field.label}>
          <FieldValue field={field} />
        </Labeled>
      ))}
    </Box>
  );
}
