import { Box, Button, FormHelperText, FormLabel, Stack } from '@mui/material';
import { useId, useRef } from 'react';
import { useInput } from 'react-admin';
import { IMAGE_TYPES, upload } from './upload';
import { useApiAction } from './useApiAction';

/** An image field: uploads the chosen file, keeps its path; shows the current image. */
export function UploadInput({ source, label }: { source: string; label: string }) {
  const { field, fieldState } = useInput({ source });
  const { run, busy } = useApiAction();
  const fileInput = useRef<HTMLInputElement>(null);
  const id = useId();
  const choose = async (file: File | undefined) => {
    if (!file) return;
    const stored = await run(() => upload(file));
    if (stored) field.onChange(stored.path);
    if (fileInput.current) fileInput.current.value = '';
  };
  return (
    <Box sx={{ my: 1 }} role="group" aria-labelledby={id}>
      <FormLabel id={id}>{label}</FormLabel>
      <Stack direction="row" spacing={1} sx={{ alignItems: 'center', mt: 0.5, flexWrap: 'wrap' }}>
        {field.value ? <Box component="img" src={field.value} alt={`Current ${label.toLowerCase()}`} sx={{ maxHeight: 80, maxWidth: 160, borderRadius: 1 }} /> : null}
        {/* A real button (keyboard: Enter or Space) that opens the hidden file chooser. */}
        <Button variant="outlined" disabled={busy} onClick={() => fileInput.current?.click()}>
          {field.value ? `Replace ${label.toLowerCase()}` : `Upload ${label.toLowerCase()}`}
        </Button>
        <input ref={fileInput} hidden type="file" accept={IMAGE_TYPES} onChange={(event) => choose(event.target.files?.[0])} />
        {field.value ? <Button onClick={() => field.onChange(null)}>Remove {label.toLowerCase()}</Button> : null}
      </Stack>
      {fieldState.error ? <FormHelperText error>{fieldState.error.message}</FormHelperText> : null}
    </Box>
  );
}
