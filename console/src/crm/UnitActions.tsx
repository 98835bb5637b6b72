import { Box, Button, Link as MuiLink, Stack, Typography } from '@mui/material';
import { Confirm, useGetOne, usePermissions, useRecordContext, useRefresh } from 'react-admin';
import { useState } from 'react';
import { Link, useNavigate } from 'react-router-dom';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { useApiAction } from '../shared/useApiAction';

type Unit = { id: string; inventory_code: string; status: string; sold_to: string | null; project: { id: string; name: string } };

/** A unit's reservation: reserve it when available; see who holds it; record the sale (PATCH /api/projects/inventory). */
export default function UnitActions() {
  const unit = useRecordContext<Unit>();
  const { permissions } = usePermissions<Permission[]>();
  const navigate = useNavigate();
  const refresh = useRefresh();
  const { run, busy } = useApiAction();
  const [confirming, setConfirming] = useState(false);
  const holder = useGetOne('reservations', { id: unit?.sold_to ?? '' }, { enabled: !!unit?.sold_to });
  if (!unit) return null;
  const write = can(permissions, 'crm', 'write');

  const sell = async () => {
    setConfirming(false);
    await run(() => api('/api/projects/inventory', { method: 'PATCH', body: { inventory_id: unit.id, status: 'sold', sold_to: unit.sold_to } }), `${unit.inventory_code} marked as sold`);
    refresh();
  };

  return (
    <Box component="section" aria-labelledby="unit-reservation" sx={{ p: 2 }}>
      <Typography id="unit-reservation" variant="h6" component="h2" gutterBottom>Reservation</Typography>
      {unit.sold_to ? (
        <Typography variant="body2" sx={{ mb: 1 }}>
          {unit.status === 'sold' ? 'Sold to' : 'Held by'}{' '}
          <MuiLink component={Link} to={`/reservations/${unit.sold_to}/show`}>{holder.data ? `${holder.data.client_name} (${holder.data.status})` : 'the reservation'}</MuiLink>
        </Typography>
      ) : <Typography variant="body2" sx={{ mb: 1 }}>Nobody holds this unit.</Typography>}
      {write ? (
        <Stack direction="row" spacing={1}>
          {unit.status === 'available' ? (
            <Button variant="contained" onClick={() => navigate('/reservations/create', { state: { record: { inventory: { id: unit.id }, project_name: unit.project.name } } })}>
              Reserve this unit
            </Button>
          ) : null}
          {unit.status === 'reserved' && unit.sold_to && holder.data?.status !== 'cancelled' ? (
            <Button variant="outlined" disabled={busy} onClick={() => setConfirming(true)}>Mark as sold</Button>
          ) : null}
        </Stack>
      ) : null}
      <Confirm isOpen={confirming} title={`Mark ${unit.inventory_code} as sold?`} content="The unit is sold to the client of its reservation." confirm="Mark as sold" onConfirm={sell} onClose={() => setConfirming(false)} />
    </Box>
  );
}
