import { useQuery } from '@tanstack/react-query';
import { HttpError, usePermissions } from 'react-admin';
import { can, type Permission } from '../api/authProvider';
import { api } from '../api/http';
import { useFallbackPoll } from '../live/useLive';
import { useApi } from '../workspace/shared';
import { type Group, listAll, type Plan, type Rule } from './types';
import { useLeadFlowPeople } from './access';

// The lead-flow settings as the settings screen and its forms read them: one cache entry per kind, under 'lead-flow',
// which the live stream reads again when anyone changes a group, a rule or a plan.

const useList = <T,>(name: string, path: string, sort: (a: T, b: T) => number) => {
  const poll = useFallbackPoll();
  return useQuery({
    queryKey: ['lead-flow', name],
    queryFn: async ({ signal }) => (await listAll<T>((query) => api(path, { query, signal }))).sort(sort),
    refetchInterval: poll,
  });
};

export const useGroups = () => useList<Group>('groups', '/api/crm/lead-flow/groups', (a, b) => a.name.localeCompare(b.name));
export const useRules = () => useList<Rule>('rules', '/api/crm/lead-flow/rules', (a, b) => Number(a.is_default) - Number(b.is_default) || a.position - b.position);
export const usePlans = () => useList<Plan>('plans', '/api/crm/lead-flow/plans', (a, b) => a.name.localeCompare(b.name));

type Named = { id: string; name: string };

/** The projects a rule may name: those with units (crm read), and every project for cms readers. */
export function useProjects(): Named[] {
  const { permissions } = usePermissions<Permission[]>();
  const stats = useApi<{ inventory: { by_project: { project: Named }[] } }>(['crm', 'stats'], '/api/crm/stats');
  const cms = useApi<{ data: Named[] }>(['projects', 'lead-flow'], '/api/cms/projects', { limit: 100, sort: 'name', order: 'asc' }, { enabled: can(permissions, 'cms', 'read') });
  const all = new Map<string, Named>();
  for (const { project } of stats.data?.inventory.by_project ?? []) all.set(project.id, project);
  for (const project of cms.data?.data ?? []) all.set(project.id, { id: project.id, name: project.name });
  return [...all.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** The name of a user the settings name by id: from the groups' members, else the lead-flow people. */
export function useUserName(id: string | null, groups: Group[] | undefined): string | null {
  const known = id ? groups?.flatMap((g) => g.members).find((m) => m.user_id === id)?.name : undefined;
  const people = useLeadFlowPeople(!!id && !known);
  if (!id) return null;
  return known ?? people.data?.data.find((person) => person.id === id)?.name ?? 'a user';
}

/** A form's problems from the API: its 400 details by field, or one message for the whole form. */
export type Problems = { fields: Record<string, string>; form?: string };

export function problemsOf(error: unknown): Problems {
  if (error instanceof HttpError) {
    const details = error.body?.details as Record<string, string> | undefined;
    if (error.status === 400 && details) return { fields: details };
    if (error.status === 403) return { fields: {}, form: 'Only administrators and department managers may change lead-flow settings.' };
  }
  return { fields: {}, form: (error as Error)?.message || 'The change failed' };
}

/** The message of a field: its own key, or one of its items (`members.2`, `steps.0.title`). */
export const fieldProblem = (problems: Problems, field: string): string | undefined =>
  problems.fields[field] ?? Object.entries(problems.fields).find(([key]) => key.startsWith(`${field}.`) || key.startsWith(`${field}/`) || key.startsWith(`/${field}`))?.[1];
