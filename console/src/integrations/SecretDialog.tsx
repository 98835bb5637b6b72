import ContentCopyIcon from '@mui/icons-material/ContentCopy';
import { Alert, Button, Dialog, DialogActions, DialogContent, DialogTitle, Stack, TextField } from '@mui/material';
import { useId, useRef, useState } from 'react';

/**
 * A webhook's signing secret, the one time the API shows it (after create or "Rotate secret"): a copy button and a
 * warning that it will not be shown again. Closed only by its button, so it is not dismissed by a stray click.
 */
export function SecretDialog({ secret, onClose }: { secret: string; onClose: () => void }) {
  const titleId = useId();
  const input = useRef<HTMLInputElement>(null);
  const [copied, setCopied] = useState<boolean>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      // No clipboard (an insecure origin, a refused permission): the text is selected for Ctrl+C instead.
      input.current?.select();
      setCopied(false);
    }
  };
  return (
    <Dialog open aria-labelledby={titleId} fullWidth maxWidth="sm">
      <DialogTitle id={titleId}>Signing secret</DialogTitle>
      <DialogContent>
        <Alert severity="warning" sx={{ mb: 2 }}>
          Copy this secret now and store it with the receiving system: you will not see it again. It verifies the
          <code> webhook-signature </code> header of every delivery.
        </Alert>
        <Stack direction={{ xs: 'column', sm: 'row' }} spacing={1} sx={{ alignItems: { sm: 'center' } }}>
          <TextField
            inputRef={input}
            label="Signing secret"
            value={secret}
            fullWidth
            slotProps={{ htmlInput: { readOnly: true, spellCheck: false, style: { fontFamily: 'monospace' } } }}
            onFocus={(event) => event.target.select()}
          />
          <Button variant="outlined" startIcon={<ContentCopyIcon />} onClick={copy} sx={{ flexShrink: 0 }}>Copy</Button>
        </Stack>
        <div role="status" aria-live="polite">
          {copied === true ? <Alert severity="success" sx={{ mt: 1 }}>Copied to the clipboard.</Alert> : null}
          {copied === false ? <Alert severity="info" sx={{ mt: 1 }}>The clipboard is not available here: the secret is selected, press Ctrl+C.</Alert> : null}
        </div>
      </DialogContent>
      <DialogActions>
        <Button variant="contained" onClick={onClose}>I have stored the secret</Button>
      </DialogActions>
    </Dialog>
  );
}
