import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { HttpError, useLogoutIfAccessDenied, useNotify } from 'react-admin';
import { useNavigate } from 'react-router-dom';
import { api } from '../api/http';

/** What a lost race says: the lead went to whoever claimed it a moment earlier. */
export const CLAIMED_BY_SOMEONE_ELSE = 'Someone else claimed it first';

/** The time now, read again every `everyMs` (a countdown, a clock of minutes waiting). */
export function useNow(everyMs = 1_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), everyMs);
    return () => window.clearInterval(timer);
  }, [everyMs]);
  return now;
}

/**
 * Claiming a lead waiting in a pool (POST /api/crm/leads/{id}/claim): the lead opens once it is the caller's; a 409
 * says someone else was quicker. Either way My day and the lead are read again.
 */
export function useClaim() {
  const notify = useNotify();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const [busy, setBusy] = useState<string | null>(null);
  const claim = async (leadId: string, name: string) => {
    setBusy(leadId);
    try {
      await api(`/api/crm/leads/${leadId}/claim`, { method: 'POST' });
      notify(`${name} is yours`, { type: 'success' });
      navigate(`/leads/${leadId}/show`);
    } catch (error) {
      if (await logoutIfAccessDenied(error)) return;
      const conflict = error instanceof HttpError && error.status === 409;
      notify(conflict ? CLAIMED_BY_SOMEONE_ELSE : (error as Error).message || 'The claim failed', { type: conflict ? 'warning' : 'error' });
    } finally {
      setBusy(null);
      await Promise.all([['my-day'], ['leads']].map((queryKey) => queryClient.invalidateQueries({ queryKey })));
    }
  };
  return { claim, busy };
}
