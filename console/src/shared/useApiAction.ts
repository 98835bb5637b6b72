import { useCallback, useState } from 'react';
import { useLogoutIfAccessDenied, useNotify } from 'react-admin';

/**
 * Runs a call of a custom screen (uploads, galleries, module access, sending a campaign): a 401 signs out with
 * a message, any other failure becomes a notification (a 429 says when to retry). Resolves undefined on failure.
 */
export function useApiAction() {
  const notify = useNotify();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T,>(call: () => Promise<T>, success?: string): Promise<T | undefined> => {
    setBusy(true);
    try {
      const result = await call();
      if (success) notify(success, { type: 'success' });
      return result;
    } catch (error) {
      if (!(await logoutIfAccessDenied(error))) notify((error as Error).message || 'The request failed', { type: 'error' });
      return undefined;
    } finally {
      setBusy(false);
    }
  }, [notify, logoutIfAccessDenied]);
  return { run, busy };
}
