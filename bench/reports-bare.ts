/**
 * The yardstick of `npm run bench:reports`: each report's default grouping written plainly, as one would in psql, and
 * run through `pg` with no service around it (no scope machinery, no labels, no transaction). Parameters: $1 the first
 * local day, $2 the last, $3 the one owner of an `own` reader (null: everyone), $4 the reading time (where used). Each returns one
 * row per group and the totals row (`key` null, from `rollup`), with the report's figures under their names, so the
 * benchmark can check the service's totals against them.
 */
const TZ = `'Asia/Manila'`;
const start = `($1::date::timestamp at time zone ${TZ})`;
const end = `(($2::date + 1)::timestamp at time zone ${TZ})`;

export const BARE_SQL: Record<string, string> = {
  // Leads created in the range by source; of them, reached a status, reserved, sold by the end of the range.
  funnel: `
    with cohort as (
      select id, source from leads
      where created_at >= ${start} and created_at < ${end}
        and ($3::uuid is null or assigned_to = $3 or created_by = $3 or pool_id = $3)
    ),
    reached as (
      select s.lead_id, bool_or(s.to_status in ('contacted', 'qualified', 'converted')) as contacted, bool_or(s.to_status in ('qualified', 'converted')) as qualified
      from lead_status_changes s
      where s.changed_at >= ${start} and s.changed_at < ${end} -- a lead moves after it is created
        and s.to_status in ('contacted', 'qualified', 'converted')
        and ($3::uuid is null or s.lead_id in (select id from cohort)) -- one agent's few leads: theirs alone
      group by s.lead_id
    ),
    reserved as (select distinct lead_id from reservations where created_at < ${end} and ($3::uuid is null or created_by = $3)),
    sold as (
      select distinct r.lead_id from reservations r join unit_status_changes u on u.reservation_id = r.id
      where u.to_status = 'sold' and u.changed_at < ${end} and ($3::uuid is null or r.created_by = $3)
    )
    select c.source as key, count(*)::int as leads, count(*) filter (where r.contacted)::int as contacted, count(*) filter (where r.qualified)::int as qualified,
      count(v.lead_id)::int as reserved, count(s.lead_id)::int as sold
    from cohort c left join reached r on r.lead_id = c.id left join reserved v on v.lead_id = c.id left join sold s on s.lead_id = c.id
    group by rollup (c.source)`,

  // Leads assigned in the range by current assignee: contacted, median and 90th percentile minutes, within the limit.
  'speed-to-lead': `
    select case when grouping(l.assigned_to) = 0 then coalesce(l.assigned_to::text, 'none') end as key, count(*)::int as assigned, count(r.first_contact_at)::int as contacted,
      percentile_cont(0.5) within group (order by case when r.first_contact_at is not null then greatest(0, extract(epoch from r.first_contact_at - r.assigned_at) / 60) end) as median_minutes,
      percentile_cont(0.9) within group (order by case when r.first_contact_at is not null then greatest(0, extract(epoch from r.first_contact_at - r.assigned_at) / 60) end) as p90_minutes,
      count(*) filter (where d.due is not null and (r.first_contact_at is not null or d.due <= $4::timestamptz))::int as with_limit,
      count(*) filter (where r.first_contact_at <= d.due)::int as within_limit
    from lead_routing r join leads l on l.id = r.lead_id left join lead_flow_rules f on f.id = r.rule_id,
      lateral (select coalesce(r.speed_due_at, r.assigned_at + f.speed_limit_minutes * interval '1 minute') as due) d
    where r.assigned_at >= ${start} and r.assigned_at < ${end}
      and ($3::uuid is null or l.assigned_to = $3 or l.created_by = $3 or l.pool_id = $3)
    group by rollup (l.assigned_to)`,

  // Per agent and local week: activities by kind (calls by outcome), follow-ups completed and gone overdue, reservations;
  // counted per agent and week first, then totalled.
  'agent-activity': `
    with facts as (
      select author_id as agent, occurred_at as at, kind as what, outcome from crm_activities
      where occurred_at >= ${start} and occurred_at < ${end} and author_id is not null and kind <> 'note' and ($3::uuid is null or author_id = $3)
      union all
      select done_by, done_at, 'followup_completed', null from crm_tasks
      where done_at >= ${start} and done_at < ${end} and done_by is not null and ($3::uuid is null or done_by = $3)
      union all
      select assigned_to, due_at, 'followup_overdue', null from crm_tasks
      where due_at >= ${start} and due_at < ${end} and due_at < $4::timestamptz and (done_at is null or done_at > due_at) and ($3::uuid is null or assigned_to = $3)
      union all
      select created_by, created_at, 'reservation', null from reservations
      where created_at >= ${start} and created_at < ${end} and created_by is not null and ($3::uuid is null or created_by = $3)
    ),
    weekly as (
      select agent, date_trunc('week', at at time zone ${TZ}) as week,
        count(*) filter (where what = 'call')::int as calls,
        count(*) filter (where what = 'call' and outcome = 'answered')::int as calls_answered,
        count(*) filter (where what = 'call' and outcome = 'no_answer')::int as calls_no_answer,
        count(*) filter (where what = 'call' and outcome = 'busy')::int as calls_busy,
        count(*) filter (where what = 'call' and outcome = 'voicemail')::int as calls_voicemail,
        count(*) filter (where what = 'call' and outcome = 'wrong_number')::int as calls_wrong_number,
        count(*) filter (where what = 'email')::int as emails, count(*) filter (where what = 'meeting')::int as meetings,
        count(*) filter (where what = 'site_visit')::int as site_visits, count(*) filter (where what = 'followup_completed')::int as followups_completed,
        count(*) filter (where what = 'followup_overdue')::int as followups_overdue, count(*) filter (where what = 'reservation')::int as reservations
      from facts group by 1, 2
    )
    select agent::text || '|' || to_char(week, 'YYYY-MM-DD') as key,
      ${['calls', 'calls_answered', 'calls_no_answer', 'calls_busy', 'calls_voicemail', 'calls_wrong_number', 'emails', 'meetings', 'site_visits',
        'followups_completed', 'followups_overdue', 'reservations'].map((figure) => `sum(${figure})::int as ${figure}`).join(', ')}
    from weekly group by rollup ((agent, week))`,

  // Per project: deals of the range (through the reader's reservations), each unit's last status at the end of the
  // range, and the units taken off the market in the three months before its end.
  projects: `
    with moves as (
      select m.* from unit_status_changes m join inventory_units u on u.id = m.unit_id where m.changed_at < ${end}
    ),
    deals as (
      select m.project_id,
        count(*) filter (where m.to_status = 'reserved')::int as reservations, coalesce(sum(m.price) filter (where m.to_status = 'reserved'), 0) as reservations_value,
        count(*) filter (where m.to_status = 'sold')::int as sales, coalesce(sum(m.price) filter (where m.to_status = 'sold'), 0) as sales_value,
        count(*) filter (where m.from_status = 'reserved' and m.to_status = 'available')::int as cancellations
      from moves m
      where m.changed_at >= ${start} and ($3::uuid is null or m.reservation_id in (select id from reservations where created_by = $3))
      group by m.project_id
    ),
    last as (
      select distinct on (unit_id) project_id, to_status from moves
      where changed_at < (($2::date + 1)::timestamp at time zone ${TZ}) order by unit_id, changed_at desc, id desc
    ),
    stock as (
      select project_id, count(*) filter (where to_status = 'available')::int as available, count(*) filter (where to_status = 'reserved')::int as reserved,
        count(*) filter (where to_status = 'sold')::int as sold
      from last group by project_id
    ),
    taken as (
      select project_id, count(*)::int as taken from moves
      where changed_at >= ${end} - interval '3 months' and (to_status = 'reserved' or (to_status = 'sold' and from_status = 'available'))
      group by project_id
    )
    select p.id::text as key, sum(coalesce(d.reservations, 0))::int as reservations, sum(coalesce(d.reservations_value, 0)) as reservations_value,
      sum(coalesce(d.sales, 0))::int as sales, sum(coalesce(d.sales_value, 0)) as sales_value, sum(coalesce(d.cancellations, 0))::int as cancellations,
      sum(coalesce(s.available, 0))::int as available, sum(coalesce(s.reserved, 0))::int as reserved, sum(coalesce(s.sold, 0))::int as sold,
      sum(coalesce(t.taken, 0))::int as taken
    from projects p left join deals d on d.project_id = p.id left join stock s on s.project_id = p.id left join taken t on t.project_id = p.id
    where exists (select 1 from inventory_units u where u.project_id = p.id)
    group by rollup (p.id)`,
};
