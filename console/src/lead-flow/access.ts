import { useQuery } from '@tanstack/react-query';
import { usePermissions } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';

/**
 * Whose home page is My day: people who work leads (crm read) and do not run the system (no iam write). Administrators
 * keep the dashboard as their home; everyone reaches both from the menu.
 */
export const homeIsMyDay = (permissions: Permission[] | undefined) => can(permissions, 'crm', 'read') && !can(permissions, 'iam', 'write');

/** The people leads can go to (crm writers), and whether the signed-in user may change the settings. */
export type LeadFlowPeople = { data: { id: string; name: string; department: string | null; away: boolean; eligible: boolean }[]; may_manage: boolean };

/** `GET /api/crm/lead-flow/people`, shared by the settings screen and its pickers. */
export function useLeadFlowPeople(enabled = true) {
  const { permissions } = usePermissions<Permission[]>();
  return useQuery({
    queryKey: ['lead-flow', 'people'],
    queryFn: ({ signal }) => api<LeadFlowPeople>('/api/crm/lead-flow/people', { signal }),
    enabled: enabled && can(permissions, 'crm', 'read'),
    staleTime: 60_000,
  });
}

/**
 * Whether the signed-in user may change lead-flow settings: administrators (iam write), and department managers with
 * crm write; the service says which (`may_manage`).
 */
export function useCanManageLeadFlow(): { canManage: boolean; known: boolean } {
  const people = useLeadFlowPeople();
  return { canManage: !!people.data?.may_manage, known: people.isSuccess };
}
