// The lead-flow API's shapes as the console reads them (the contract: groups, rules, plans, a lead's flow, My day).

export const GROUP_KINDS = ['round_robin', 'first_to_claim', 'pond'] as const;
export const CHANNELS = ['website', 'import', 'api'] as const;
export const STEP_KINDS = ['call', 'email', 'meeting', 'site_visit', 'task'] as const;
export const OFFSET_UNITS = ['hours', 'days'] as const;
export const SPEED_ACTIONS = ['remind', 'reassign'] as const;
export type GroupKind = (typeof GROUP_KINDS)[number];

export const KIND_LABELS: Record<GroupKind, string> = { round_robin: 'Round robin', first_to_claim: 'First to claim', pond: 'Pond' };
export const words = (value: string) => value.replace(/_/g, ' ');

export type Member = { user_id: string; name: string; position: number; away: boolean; eligible: boolean };
export type Group = {
  id: string; name: string; kind: GroupKind; claim_minutes: number | null; fallback_user_id: string | null; fallback_group_id: string | null;
  members: Member[]; next_user_id: string | null; waiting: number; created_at: string; updated_at: string;
};
export type Rule = {
  id: string; name: string; position: number; is_default: boolean; channel: (typeof CHANNELS)[number] | null; source: string | null; project_id: string | null;
  assign_user_id: string | null; assign_group_id: string | null; action_plan_id: string | null; speed_limit_minutes: number | null;
  on_speed_limit: (typeof SPEED_ACTIONS)[number]; created_at: string; updated_at: string;
};
export type Step = { id?: string; position?: number; kind: (typeof STEP_KINDS)[number]; title: string; offset_amount: number; offset_unit: (typeof OFFSET_UNITS)[number] };
export type Plan = { id: string; name: string; active_statuses: string[]; steps: Step[]; running: number; created_at: string; updated_at: string };

export type PlanRun = { id: string; plan_id: string; name: string; started_at: string; stopped_at: string | null; stop_reason: string | null; open_tasks: number };
export type Flow = {
  rule: { id: string; name: string } | null; channel: string | null; pool: { id: string; name: string; kind: GroupKind } | null;
  claim_deadline: string | null; assigned_at: string | null; first_contact_at: string | null; minutes_to_first_contact: number | null;
  speed_due_at: string | null; speed_stage: number | null; plans: PlanRun[];
};

export type LeadBrief = { id: string; first_name: string; last_name: string; source: string; interest: string | null };
export type Task = { id: string; title: string; notes: string | null; due_at: string; lead_id: string | null; assigned_to: { id: string; name: string } | null; done_at: string | null };
export type MyDay = {
  to_claim: { lead: LeadBrief; pool: { id: string; name: string; kind: GroupKind }; claim_deadline: string | null }[];
  not_contacted: { lead: LeadBrief; assigned_at: string; speed_due_at: string | null; minutes_waiting: number }[];
  overdue: Task[];
  today: Task[];
  site_visits: { id: string; lead: LeadBrief; occurred_at: string; place: string | null }[];
  /** Each list's full count (a list holds the most urgent items only). */
  counts?: Record<'to_claim' | 'not_contacted' | 'overdue' | 'today' | 'site_visits', number>;
};

/** "4:05" (minutes and seconds), "1:02:03" past an hour; never negative. */
export function countdownText(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const pad = (n: number) => String(n).padStart(2, '0');
  return h ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/** "12 min", "2 h 5 min", "3 d 4 h". */
export function durationText(minutes: number): string {
  const m = Math.max(0, Math.floor(minutes));
  if (m < 60) return `${m} min`;
  if (m < 24 * 60) return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
  const d = Math.floor(m / 1440);
  const h = Math.floor((m % 1440) / 60);
  return `${d} d${h ? ` ${h} h` : ''}`;
}

/** Every item of a list, whether the API answers it whole (`{data}`) or in pages (`{data, pagination}`). */
export async function listAll<T>(get: (query?: Record<string, number>) => Promise<{ data: T[]; pagination?: { totalPages: number } }>): Promise<T[]> {
  const first = await get();
  if (!first.pagination || first.pagination.totalPages <= 1) return first.data;
  const rows: T[] = [];
  for (let page = 1; ; page++) {
    const answer = await get({ page, limit: 100 });
    rows.push(...answer.data);
    if (page >= (answer.pagination?.totalPages ?? 1)) return rows;
  }
}
