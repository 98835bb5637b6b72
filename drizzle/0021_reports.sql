-- Sales reports: the status history of leads and of inventory units, written by triggers whoever changes them (the
-- API, an import, a restore from the trash) and backfilled here from the audit trail, so a report on a past period
-- reads what was recorded then; the weekly report e-mail's opt-in (user_preferences.weekly_report) and the weeks it
-- went out (weekly_reports, one row per user and week: sent once across instances); indexes for reading ranges of
-- activities by when they happened and of follow-ups by when they were done.
CREATE TABLE "lead_status_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "lead_status_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"lead_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL,
	"changed_by" uuid
);
--> statement-breakpoint
CREATE TABLE "unit_status_changes" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "unit_status_changes_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"unit_id" uuid NOT NULL,
	"project_id" uuid NOT NULL,
	"from_status" text,
	"to_status" text NOT NULL,
	"reservation_id" uuid,
	"price" numeric(14, 2) NOT NULL,
	"changed_at" timestamp (3) with time zone NOT NULL,
	"changed_by" uuid
);
--> statement-breakpoint
CREATE TABLE "weekly_reports" (
	"user_id" uuid NOT NULL,
	"week" date NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "weekly_reports_pkey" PRIMARY KEY("user_id","week")
);
--> statement-breakpoint
ALTER TABLE "user_preferences" ADD COLUMN "weekly_report" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "weekly_reports" ADD CONSTRAINT "weekly_reports_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "lead_status_changes_lead_idx" ON "lead_status_changes" USING btree ("lead_id","changed_at","to_status");--> statement-breakpoint
CREATE INDEX "lead_status_changes_changed_idx" ON "lead_status_changes" USING btree ("changed_at","to_status","lead_id");--> statement-breakpoint
CREATE INDEX "unit_status_changes_project_idx" ON "unit_status_changes" USING btree ("project_id","changed_at");--> statement-breakpoint
CREATE INDEX "unit_status_changes_unit_idx" ON "unit_status_changes" USING btree ("unit_id","changed_at");--> statement-breakpoint
CREATE INDEX "unit_status_changes_reservation_idx" ON "unit_status_changes" USING btree ("reservation_id") WHERE "unit_status_changes"."to_status" = 'sold';--> statement-breakpoint
CREATE INDEX "crm_activities_occurred_idx" ON "crm_activities" USING btree ("occurred_at","author_id","kind","outcome");--> statement-breakpoint
CREATE INDEX "crm_tasks_done_idx" ON "crm_tasks" USING btree ("done_at","done_by") WHERE "crm_tasks"."done_at" is not null;
--> statement-breakpoint
-- A lead's first status (at its created_at), or, for a lead coming back from the trash, nothing new unless its status
-- differs from the last one recorded. By whom: the user an audited change names (pms.actor_id), else its creator.
CREATE OR REPLACE FUNCTION pms_lead_status_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_status_changes (lead_id, from_status, to_status, changed_at, changed_by)
  SELECT n.id, last.to_status, n.status,
    CASE WHEN last.to_status IS NULL THEN n.created_at ELSE greatest(n.updated_at, last.changed_at) END,
    coalesce(nullif(current_setting('pms.actor_id', true), '')::uuid, n.created_by)
  FROM pms_status_new n
  LEFT JOIN LATERAL (
    SELECT s.to_status, s.changed_at FROM lead_status_changes s WHERE s.lead_id = n.id ORDER BY s.changed_at DESC, s.id DESC LIMIT 1
  ) last ON true
  WHERE last.to_status IS DISTINCT FROM n.status;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- A change of status: from, to, when (the row's updated_at, as the service's clock set it; now() for a write that
-- left it alone) and by whom (pms.actor_id, set by the audited path; null otherwise).
CREATE OR REPLACE FUNCTION pms_lead_status_updates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO lead_status_changes (lead_id, from_status, to_status, changed_at, changed_by)
  SELECT n.id, o.status, n.status,
    CASE WHEN n.updated_at IS DISTINCT FROM o.updated_at THEN n.updated_at ELSE now() END,
    nullif(current_setting('pms.actor_id', true), '')::uuid
  FROM pms_status_new n JOIN pms_status_old o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER pms_lead_status_inserts AFTER INSERT ON leads REFERENCING NEW TABLE AS pms_status_new
  FOR EACH STATEMENT EXECUTE FUNCTION pms_lead_status_inserts();
--> statement-breakpoint
CREATE TRIGGER pms_lead_status_updates AFTER UPDATE ON leads REFERENCING OLD TABLE AS pms_status_old NEW TABLE AS pms_status_new
  FOR EACH STATEMENT EXECUTE FUNCTION pms_lead_status_updates();
--> statement-breakpoint
-- Units the same way, with their project, price and holder: the reservation holding it when reserved or sold, the one
-- it was released from when it becomes available again.
CREATE OR REPLACE FUNCTION pms_unit_status_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO unit_status_changes (unit_id, project_id, from_status, to_status, reservation_id, price, changed_at, changed_by)
  SELECT n.id, n.project_id, last.to_status, n.status, n.sold_to, n.price,
    CASE WHEN last.to_status IS NULL THEN n.created_at ELSE greatest(n.updated_at, last.changed_at) END,
    nullif(current_setting('pms.actor_id', true), '')::uuid
  FROM pms_status_new n
  LEFT JOIN LATERAL (
    SELECT s.to_status, s.changed_at FROM unit_status_changes s WHERE s.unit_id = n.id ORDER BY s.changed_at DESC, s.id DESC LIMIT 1
  ) last ON true
  WHERE last.to_status IS DISTINCT FROM n.status;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION pms_unit_status_updates() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO unit_status_changes (unit_id, project_id, from_status, to_status, reservation_id, price, changed_at, changed_by)
  SELECT n.id, n.project_id, o.status, n.status, CASE WHEN n.status = 'available' THEN o.sold_to ELSE n.sold_to END, n.price,
    CASE WHEN n.updated_at IS DISTINCT FROM o.updated_at THEN n.updated_at ELSE now() END,
    nullif(current_setting('pms.actor_id', true), '')::uuid
  FROM pms_status_new n JOIN pms_status_old o ON o.id = n.id
  WHERE n.status IS DISTINCT FROM o.status;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER pms_unit_status_inserts AFTER INSERT ON inventory_units REFERENCING NEW TABLE AS pms_status_new
  FOR EACH STATEMENT EXECUTE FUNCTION pms_unit_status_inserts();
--> statement-breakpoint
CREATE TRIGGER pms_unit_status_updates AFTER UPDATE ON inventory_units REFERENCING OLD TABLE AS pms_status_old NEW TABLE AS pms_status_new
  FOR EACH STATEMENT EXECUTE FUNCTION pms_unit_status_updates();
--> statement-breakpoint
-- Backfill: the status moves the audit trail recorded (a restore from the trash repeats nothing), then, for records
-- whose creation it no longer holds, their first status as the oldest known or their current one, at their creation.
INSERT INTO lead_status_changes (lead_id, from_status, to_status, changed_at, changed_by)
SELECT a.resource_id,
  CASE WHEN a.action = 'create' THEN NULL ELSE a.changes->'before'->>'status' END,
  a.changes->'after'->>'status',
  CASE WHEN a.action = 'create' THEN coalesce(l.created_at, a.created_at) ELSE a.created_at END,
  a.user_id
FROM activity_logs a LEFT JOIN leads l ON l.id = a.resource_id
WHERE a.resource = 'leads' AND a.action IN ('create', 'update') AND a.restored_from IS NULL AND a.changes->'after' ? 'status'
ORDER BY a.created_at, a.id;
--> statement-breakpoint
INSERT INTO lead_status_changes (lead_id, from_status, to_status, changed_at, changed_by)
SELECT l.id, NULL,
  coalesce((SELECT s.from_status FROM lead_status_changes s WHERE s.lead_id = l.id ORDER BY s.changed_at, s.id LIMIT 1), l.status),
  l.created_at, l.created_by
FROM leads l
WHERE NOT EXISTS (SELECT 1 FROM lead_status_changes s WHERE s.lead_id = l.id AND s.from_status IS NULL);
--> statement-breakpoint
INSERT INTO unit_status_changes (unit_id, project_id, from_status, to_status, reservation_id, price, changed_at, changed_by)
SELECT a.resource_id, u.project_id,
  CASE WHEN a.action = 'create' THEN NULL ELSE a.changes->'before'->>'status' END,
  a.changes->'after'->>'status',
  CASE
    WHEN a.changes->'after'->>'status' = 'available' THEN nullif(a.changes->'before'->>'sold_to', '')::uuid
    ELSE coalesce(nullif(a.changes->'after'->>'sold_to', '')::uuid,
      (SELECT r.id FROM reservations r WHERE r.inventory_id = u.id AND r.created_at <= a.created_at ORDER BY r.created_at DESC, r.id DESC LIMIT 1))
  END,
  u.price,
  CASE WHEN a.action = 'create' THEN u.created_at ELSE a.created_at END,
  a.user_id
FROM activity_logs a JOIN inventory_units u ON u.id = a.resource_id
WHERE a.resource = 'inventory' AND a.action IN ('create', 'update') AND a.restored_from IS NULL AND a.changes->'after' ? 'status'
ORDER BY a.created_at, a.id;
--> statement-breakpoint
INSERT INTO unit_status_changes (unit_id, project_id, from_status, to_status, reservation_id, price, changed_at, changed_by)
SELECT u.id, u.project_id, NULL,
  coalesce((SELECT s.from_status FROM unit_status_changes s WHERE s.unit_id = u.id ORDER BY s.changed_at, s.id LIMIT 1), u.status),
  CASE WHEN NOT EXISTS (SELECT 1 FROM unit_status_changes s WHERE s.unit_id = u.id) THEN u.sold_to END,
  u.price, u.created_at, NULL
FROM inventory_units u
WHERE NOT EXISTS (SELECT 1 FROM unit_status_changes s WHERE s.unit_id = u.id AND s.from_status IS NULL);
