import { Box, Checkbox, NativeSelect, Table, TableBody, TableCell, TableHead, TableRow, Typography } from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { usePermissions, useRecordContext } from 'react-admin';
import { can, forgetSession, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { MODULE_LABELS, MODULES, type Module } from '../resources/types';
import { ScrollX } from '../shared/ScrollX';
import { useApiAction } from '../shared/useApiAction';

type Scope = 'all' | 'department' | 'own';
type Access = { id: string; module: Module; can_read: boolean; can_write: boolean; can_delete: boolean; scope: Scope };
const FLAGS = [['can_read', 'Read'], ['can_write', 'Write'], ['can_delete', 'Delete']] as const;
/** Which crm records the user sees; other modules have no record scope. */
const SCOPES: [Scope, string][] = [['all', 'All records'], ['department', 'Their department\'s'], ['own', 'Their own']];

/**
 * A user's module access as a matrix of checkboxes (read / write / delete per module). Each change is saved at once:
 * a new row for a module without one, a PATCH of its flags, or its removal once no flag is left. Changes go one at a
 * time, each decided on the rows as the API answered after the one before: the boxes stay disabled until that answer
 * is back (a click meanwhile would act on rows the screen no longer shows: a second POST, or a removal judged on
 * flags just changed).
 */
export default function ModuleAccessMatrix() {
  const user = useRecordContext<{ id: string; name: string }>();
  const { permissions } = usePermissions<Permission[]>();
  const queryClient = useQueryClient();
  const { run } = useApiAction();
  // A ref as well as state: two clicks before React re-renders the disabled boxes must still not both go out.
  const saving = useRef(false);
  const [busy, setBusy] = useState(false);
  const key = ['module-access', user?.id];
  const rows = useQuery({
    queryKey: key,
    enabled: !!user,
    queryFn: ({ signal }) => api<{ data: Access[] }>(`/api/iam/module-access/${user!.id}`, { signal }).then((answer) => answer.data),
  });
  if (!user) return null;
  const editable = can(permissions, 'iam', 'write');

  /** One change at a time, then the rows as the API holds them (see above). */
  const saveOne = async (change: () => Promise<void>) => {
    if (saving.current) return;
    saving.current = true;
    setBusy(true);
    try {
      await change();
      forgetSession();
      void queryClient.invalidateQueries({ queryKey: ['auth'] });
      await queryClient.refetchQueries({ queryKey: key, exact: true });
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };
  const setScope = (row: Access, scope: Scope) => saveOne(() => run(
    () => api(`/api/iam/module-access/${row.id}`, { method: 'PATCH', body: { scope } }),
    `${user.name}: crm records ${SCOPES.find(([value]) => value === scope)![1].toLowerCase()}`,
  ));

  const toggle = async (module: Module, flag: (typeof FLAGS)[number][0], value: boolean) => {
    if (saving.current) return;
    saving.current = true;
    setBusy(true);
    try {
      const row = queryClient.getQueryData<Access[]>(key)?.find((r) => r.module === module);
      const flags = { can_read: row?.can_read ?? false, can_write: row?.can_write ?? false, can_delete: row?.can_delete ?? false, [flag]: value };
      const none = !flags.can_read && !flags.can_write && !flags.can_delete;
      await run(async () => {
        if (!row) await api('/api/iam/module-access', { method: 'POST', body: { user_id: user.id, module, ...flags } });
        else if (none && can(permissions, 'iam', 'delete')) await api(`/api/iam/module-access/${row.id}`, { method: 'DELETE' });
        else await api(`/api/iam/module-access/${row.id}`, { method: 'PATCH', body: { [flag]: value } });
      }, `${user.name}: ${module} ${flag.replace('can_', '')} ${value ? 'granted' : 'removed'}`);
      // Their own access may have changed: the menu and the controls ask again.
      forgetSession();
      void queryClient.invalidateQueries({ queryKey: ['auth'] });
      // Refused or not, the boxes show what the API holds before the next change.
      await queryClient.refetchQueries({ queryKey: key, exact: true });
    } finally {
      saving.current = false;
      setBusy(false);
    }
  };

  return (
    <Box component="section" aria-labelledby="access-title" sx={{ p: 2 }}>
      <Typography id="access-title" variant="h6" component="h2" gutterBottom>Module access</Typography>
      <ScrollX label="Module access table">
        <Table size="small" aria-labelledby="access-title" sx={{ maxWidth: 680 }}>
          <TableHead>
            <TableRow>
              <TableCell>Module</TableCell>
              {FLAGS.map(([, label]) => <TableCell key={label} align="center">{label}</TableCell>)}
              <TableCell>Records</TableCell>
            </TableRow>
          </TableHead>
          <TableBody>
            {MODULES.map((module) => {
              const row = rows.data?.find((r) => r.module === module);
              return (
                <TableRow key={module}>
                  <TableCell component="th" scope="row">{MODULE_LABELS[module]} ({module})</TableCell>
                  {FLAGS.map(([flag, label]) => (
                    <TableCell key={flag} align="center" padding="checkbox">
                      <Checkbox
                        checked={!!row?.[flag]}
                        disabled={!editable || busy || rows.isPending || rows.isFetching}
                        onChange={(event) => toggle(module, flag, event.target.checked)}
                        slotProps={{ input: { 'aria-label': `${label} ${module}` } }}
                      />
                    </TableCell>
                  ))}
                  <TableCell>
                    {module === 'crm' && row ? (
                      <NativeSelect
                        value={row.scope}
                        disabled={!editable || busy || rows.isPending || rows.isFetching}
                        onChange={(event) => setScope(row, event.target.value as Scope)}
                        inputProps={{ 'aria-label': 'Which crm records' }}
                      >
                        {SCOPES.map(([value, label]) => <option key={value} value={value}>{label}</option>)}
                      </NativeSelect>
                    ) : module === 'crm' ? '' : 'All'}
                  </TableCell>
                </TableRow>
              );
            })}
          </TableBody>
        </Table>
      </ScrollX>
    </Box>
  );
}
