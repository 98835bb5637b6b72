import NotificationsIcon from '@mui/icons-material/Notifications';
import { Badge, Box, Button, Chip, IconButton, List, ListItemButton, Popover, Stack, Typography } from '@mui/material';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { type MouseEvent, useId, useRef, useState } from 'react';
import { useNavigate } from 'react-router-dom';
import { api } from '../api/http';
import { useFallbackPoll } from '../live/useLive';
import { useApiAction } from '../shared/useApiAction';

export type Notification = {
  id: string;
  kind: string;
  title: string;
  body: string;
  record: { resource: string; id: string } | null;
  created_at: string;
  read_at: string | null;
};

/** How many of the latest notifications the menu shows. */
const SHOWN = 10;

/** The page of the record a notification names, where the console has one. */
export function pathOf(record: Notification['record']): string | null {
  if (!record) return null;
  if (record.resource === 'leads' || record.resource === 'inquiries') return `/${record.resource}/${record.id}/show`;
  return null;
}

const relative = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [['year', 31_536_000], ['month', 2_592_000], ['week', 604_800], ['day', 86_400], ['hour', 3_600], ['minute', 60]];

/** "5 minutes ago", "yesterday", "just now". */
export function ago(at: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(at) - now) / 1000);
  for (const [unit, size] of UNITS) if (Math.abs(seconds) >= size) return relative.format(Math.trunc(seconds / size), unit);
  return 'just now';
}

/** What the badge shows: nothing at 0, the count up to 99, then "99+". */
const MAX = 99;
const shown = (unread: number) => (unread > MAX ? `${MAX}+` : String(unread));
/** The bell's name holds what its badge shows (a name must contain the visible text: WCAG 2.5.3). */
const bellName = (unread: number) => (unread ? `Notifications, ${shown(unread)} unread` : 'Notifications');

/**
 * The bell in the app bar: the unread count as a badge, and a panel of the latest notifications. Choosing one marks it
 * read and opens the record it names. The count is read on load, after each action here, and whenever the live stream
 * brings a notification (console/src/live); only while the stream is down is it read again every few minutes.
 */
export function NotificationBell() {
  const navigate = useNavigate();
  const { run } = useApiAction();
  const queryClient = useQueryClient();
  const [anchor, setAnchor] = useState<HTMLElement | null>(null);
  const titleId = useId();
  const titleRef = useRef<HTMLHeadingElement>(null);
  const poll = useFallbackPoll();

  // The count in the background: a failure (offline, a session that just ended) waits for the next read quietly; the
  // screens' own reads deal with an ended session.
  const count = useQuery({
    queryKey: ['notifications', 'unread-count'],
    queryFn: ({ signal }) => api<{ unread: number }>('/api/notifications/unread-count', { signal }),
    refetchInterval: poll,
    retry: false,
    staleTime: 0,
  });
  const latest = useQuery({
    queryKey: ['notifications', 'latest'],
    queryFn: ({ signal }) => run(() => api<{ data: Notification[]; unread: number }>('/api/notifications', { query: { limit: SHOWN }, signal })).then((answer) => {
      if (answer) queryClient.setQueryData(['notifications', 'unread-count'], { unread: answer.unread });
      return answer ?? null;
    }),
    enabled: !!anchor,
    staleTime: 0,
  });
  const unread = count.data?.unread ?? 0;
  const items = anchor ? latest.data?.data ?? null : null;
  const reread = () => queryClient.invalidateQueries({ queryKey: ['notifications'] });

  const open = (event: MouseEvent<HTMLElement>) => setAnchor(event.currentTarget);
  const close = () => setAnchor(null);

  const choose = async (item: Notification) => {
    if (!item.read_at) await run(() => api(`/api/notifications/${item.id}/read`, { method: 'POST' }));
    close();
    void reread();
    const path = pathOf(item.record);
    if (path) navigate(path);
  };

  const readAll = async () => {
    // The button is disabled once nothing is unread: focus goes to the panel's title first, not to the page behind it
    // (where Escape would no longer close the panel).
    titleRef.current?.focus();
    await run(() => api('/api/notifications/read-all', { method: 'POST' }));
    await reread();
  };

  const name = bellName(unread);
  return (
    <>
      <IconButton color="inherit" aria-label={name} aria-haspopup="dialog" aria-expanded={anchor ? 'true' : 'false'} onClick={open}>
        {/* No badge at 0: a hidden badge still holds its last number, which would be text the name lacks. */}
        {unread ? <Badge badgeContent={shown(unread)} color="error"><NotificationsIcon /></Badge> : <NotificationsIcon />}
      </IconButton>
      <Popover
        open={!!anchor}
        anchorEl={anchor}
        onClose={close}
        anchorOrigin={{ vertical: 'bottom', horizontal: 'right' }}
        transformOrigin={{ vertical: 'top', horizontal: 'right' }}
        slotProps={{ paper: { role: 'dialog', 'aria-labelledby': titleId, sx: { width: 360, maxWidth: 'calc(100vw - 16px)' } } as object }}
      >
        <Stack direction="row" sx={{ alignItems: 'center', justifyContent: 'space-between', px: 2, pt: 1.5, pb: 1 }}>
          <Typography id={titleId} ref={titleRef} tabIndex={-1} variant="subtitle1" component="h2" sx={{ fontWeight: 600 }}>Notifications</Typography>
          <Button size="small" onClick={readAll} disabled={!unread}>Mark all read</Button>
        </Stack>
        {items === null ? (
          <Typography variant="body2" sx={{ px: 2, pb: 2 }}>Loading…</Typography>
        ) : items.length === 0 ? (
          <Typography variant="body2" sx={{ px: 2, pb: 2 }}>No notifications</Typography>
        ) : (
          <List dense aria-label="Latest notifications" sx={{ pt: 0 }}>
            {items.map((item) => (
              <li key={item.id}>
                <ListItemButton onClick={() => void choose(item)} sx={{ alignItems: 'flex-start', display: 'block' }}>
                  <Stack direction="row" spacing={1} sx={{ alignItems: 'baseline', justifyContent: 'space-between' }}>
                    <Typography variant="body2" sx={{ fontWeight: item.read_at ? 400 : 700, wordBreak: 'break-word' }}>{item.title}</Typography>
                    {item.read_at ? null : <Chip label="Unread" size="small" color="primary" sx={{ flexShrink: 0 }} />}
                  </Stack>
                  <Typography variant="body2" color="text.secondary" sx={{ wordBreak: 'break-word' }}>{item.body}</Typography>
                  <Box component="time" dateTime={item.created_at} title={new Date(item.created_at).toLocaleString()} sx={{ typography: 'caption', color: 'text.secondary' }}>
                    {ago(item.created_at)}
                  </Box>
                </ListItemButton>
              </li>
            ))}
          </List>
        )}
      </Popover>
    </>
  );
}
