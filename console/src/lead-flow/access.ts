import { useQuery } from '@tanstack/react-query';
import { usePermissions } from 'react-admin';
import { can, currentSession, type Permission } from '../api/authProvider';
import { api } from '../api/http';

/**
 * Whose home page is My day: people who work leads (crm read) and do not run the system (no iam write). Administrators
 * keep the dashboard as their home; everyone reaches both from the menu.
 */
export const homeIsMyDay = (permissions: Permission[] | undefined) => can(permissions, 'crm', 'read') && !can(permissions, 'iam', 'write');

/**
 * Whether the signed-in user may change lead-flow settings: administrators (iam write), and department managers with
 * crm write. The session does not say who manages a department; an iam reader sees it in the departments list, anyone
 * else with crm write is offered the changes and told by the API (403) if they are not a manager.
 */
export function useCanManageLeadFlow(): { canManage: boolean; known: boolean } {
  const { permissions } = usePermissions<Permission[]>();
  const admin = can(permissions, 'iam', 'write');
  const writer = can(permissions, 'crm', 'write');
  const askDepartments = writer && !admin && can(permissions, 'iam', 'read');
  const managing = useQuery({
    queryKey: ['departments', 'lead-flow-manager'],
    queryFn: async ({ signal }) => {
      const [me, departments] = await Promise.all([
        currentSession(),
        api<{ data: { id: string; manager?: { id: string } | null; manager_id?: string | null }[] }>('/api/iam/departments', { signal }),
      ]);
      return departments.data.some((d) => (d.manager?.id ?? d.manager_id) === me?.user.id);
    },
    enabled: askDepartments,
    staleTime: 60_000,
  });
  if (admin) return { canManage: true, known: true };
  if (!writer) return { canManage: false, known: true };
  if (askDepartments) return { canManage: !!managing.data, known: managing.isSuccess };
  return { canManage: true, known: false };
}
