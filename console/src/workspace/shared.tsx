import { Autocomplete, TextField } from '@mui/material';
import { type QueryKey, useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { useLogoutIfAccessDenied } from 'react-admin';
import { api, type Query } from '../api/http';
import { specOf } from '../resources/declarations';

// What the sales workspace's screens (pipeline, availability board, lead page) share: reads of the API through the
// console's query cache (a 401 signs out, as everywhere), the choices the declarations already name, a user picker.

export type Paginated<T> = { data: T[]; pagination: { page: number; limit: number; total: number; totalPages: number } };
export type Ref = { id: string; name: string; email?: string } | null;
export type Lead = {
  id: string; first_name: string; last_name: string; email: string | null; phone: string | null; source: string; status: string;
  interest: string | null; notes: string | null; assigned_to: Ref; created_at: string; updated_at: string;
};

/** The values a declared select field offers (lead statuses, sources…): declared once, in resources/declarations. */
export const choicesOf = (resource: string, source: string): readonly string[] =>
  specOf(resource).fields.find((field) => field.source === source)?.choices ?? [];

export const LEAD_STATUSES = choicesOf('leads', 'status');
export const LEAD_SOURCES = choicesOf('leads', 'source');
export const leadName = (lead: Pick<Lead, 'first_name' | 'last_name'>) => `${lead.first_name} ${lead.last_name}`;

const money = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
export const moneyText = (value: number) => money.format(value);
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
export const dateTimeText = (value: string) => dateTime.format(new Date(value));

/** A GET of the API through the console's query cache; a 401 signs out with the usual message. */
export function useApi<T>(key: QueryKey, path: string, query?: Query, options: { enabled?: boolean; refetchInterval?: number | false; staleTime?: number } = {}) {
  const logoutIfAccessDenied = useLogoutIfAccessDenied();
  const result = useQuery({
    queryKey: [...key, path, query ?? {}],
    queryFn: ({ signal }) => api<T>(path, { query, signal }),
    staleTime: options.staleTime ?? 5_000,
    enabled: options.enabled ?? true,
    refetchInterval: options.refetchInterval,
  });
  useEffect(() => {
    if (result.error) void logoutIfAccessDenied(result.error);
  }, [result.error, logoutIfAccessDenied]);
  return result;
}

type UserOption = { id: string; name: string; email?: string };

/** A user chosen by name (GET /api/iam/users?q=…); only offered to iam readers. */
export function UserPicker({ label, value, onChange, disabled, error, helperText }: {
  label: string; value: UserOption | null; onChange: (user: UserOption | null) => void; disabled?: boolean; error?: boolean; helperText?: string;
}) {
  const [text, setText] = useState('');
  const users = useApi<Paginated<UserOption>>(['users', 'picker'], '/api/iam/users', { q: text.trim() || undefined, limit: 20, sort: 'name', order: 'asc' });
  return (
    <Autocomplete
      size="small"
      fullWidth
      disabled={disabled}
      options={users.data?.data ?? []}
      loading={users.isLoading}
      value={value}
      onChange={(_, next) => onChange(next)}
      onInputChange={(_, next, reason) => reason === 'input' && setText(next)}
      isOptionEqualToValue={(a, b) => a.id === b.id}
      getOptionLabel={(user) => user.name}
      filterOptions={(options) => options}
      renderInput={(params) => <TextField {...params} label={label} error={error} helperText={helperText} />}
    />
  );
}
