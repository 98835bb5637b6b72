-- The database owns the change log (DESIGN: "The database owns the change log"): every committed write to a table that
-- a list, a total, a kept page or a stats figure reads is logged by these triggers, whoever writes it (the audited
-- path, Better Auth, `npm run admin`, a migration, an operator's SQL). Statement-level with transition tables: one
-- trigger call per statement, however many rows. A statement that writes more rows than a cached total would ever
-- test (200: MAX_CHANGES in src/data/list.ts) logs one entry without a row id instead, which makes every cached total
-- and kept page of the resource be read again: a bulk write costs one row, not N JSON rows.
-- Arguments: the resource name (as src/data/resource.ts declares it), then columns never copied (secrets, and large
-- bodies no list filter reads).
CREATE OR REPLACE FUNCTION pms_log_inserts() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written int := (SELECT count(*) FROM (SELECT 1 FROM pms_new LIMIT 201) s);
BEGIN
  IF written = 0 THEN
    RETURN NULL; -- a statement that wrote nothing (the webhook deliveries of a change no endpoint listens to)
  ELSIF written > 200 THEN
    INSERT INTO change_log (resource, row_id) VALUES (TG_ARGV[0], NULL);
  ELSE
    INSERT INTO change_log (resource, row_id, after) SELECT TG_ARGV[0], n.id, to_jsonb(n) - TG_ARGV[1:] FROM pms_new n;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION pms_log_updates() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written int := (SELECT count(*) FROM (SELECT 1 FROM pms_new LIMIT 201) s);
BEGIN
  IF written = 0 THEN
    RETURN NULL; -- a statement that wrote nothing (the webhook deliveries of a change no endpoint listens to)
  ELSIF written > 200 THEN
    INSERT INTO change_log (resource, row_id) VALUES (TG_ARGV[0], NULL);
  ELSE
    -- A row written back unchanged is no change.
    INSERT INTO change_log (resource, row_id, before, after)
      SELECT TG_ARGV[0], n.id, b.row, a.row
      FROM pms_old o JOIN pms_new n ON n.id = o.id,
        LATERAL (SELECT to_jsonb(o) - TG_ARGV[1:]) b(row), LATERAL (SELECT to_jsonb(n) - TG_ARGV[1:]) a(row)
      WHERE b.row IS DISTINCT FROM a.row;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION pms_log_deletes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  written int := (SELECT count(*) FROM (SELECT 1 FROM pms_old LIMIT 201) s);
BEGIN
  IF written = 0 THEN
    RETURN NULL; -- a statement that wrote nothing (the webhook deliveries of a change no endpoint listens to)
  ELSIF written > 200 THEN
    INSERT INTO change_log (resource, row_id) VALUES (TG_ARGV[0], NULL);
  ELSE
    INSERT INTO change_log (resource, row_id, before) SELECT TG_ARGV[0], o.id, to_jsonb(o) - TG_ARGV[1:] FROM pms_old o;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
-- "This resource changed in ways not listed": for a list whose filter reads another table (users by department name).
CREATE OR REPLACE FUNCTION pms_log_touch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO change_log (resource, row_id) VALUES (TG_ARGV[0], NULL);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- The three triggers of one table (transition tables allow one event per trigger).
CREATE OR REPLACE FUNCTION pms_log_changes_of(tbl regclass, resource text, hidden text[] DEFAULT '{}') RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  args text := array_to_string(ARRAY(SELECT quote_literal(a) FROM unnest(resource || hidden) a), ', ');
BEGIN
  EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %s REFERENCING NEW TABLE AS pms_new FOR EACH STATEMENT EXECUTE FUNCTION pms_log_inserts(%s)', 'pms_log_inserts', tbl, args);
  EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %s REFERENCING OLD TABLE AS pms_old NEW TABLE AS pms_new FOR EACH STATEMENT EXECUTE FUNCTION pms_log_updates(%s)', 'pms_log_updates', tbl, args);
  EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %s REFERENCING OLD TABLE AS pms_old FOR EACH STATEMENT EXECUTE FUNCTION pms_log_deletes(%s)', 'pms_log_deletes', tbl, args);
END $$;
--> statement-breakpoint
SELECT pms_log_changes_of('projects', 'projects');
--> statement-breakpoint
SELECT pms_log_changes_of('gallery_images', 'galleries');
--> statement-breakpoint
SELECT pms_log_changes_of('articles', 'articles');
--> statement-breakpoint
SELECT pms_log_changes_of('careers', 'careers');
--> statement-breakpoint
SELECT pms_log_changes_of('amenities', 'amenities');
--> statement-breakpoint
SELECT pms_log_changes_of('uploads', 'uploads');
--> statement-breakpoint
SELECT pms_log_changes_of('leads', 'leads');
--> statement-breakpoint
SELECT pms_log_changes_of('inventory_units', 'inventory');
--> statement-breakpoint
SELECT pms_log_changes_of('reservations', 'reservations');
--> statement-breakpoint
SELECT pms_log_changes_of('inquiries', 'inquiries');
--> statement-breakpoint
SELECT pms_log_changes_of('newsletter_subscriptions', 'newsletters');
--> statement-breakpoint
SELECT pms_log_changes_of('campaigns', 'campaigns');
--> statement-breakpoint
SELECT pms_log_changes_of('campaign_deliveries', 'campaign_deliveries');
--> statement-breakpoint
SELECT pms_log_changes_of('imports', 'imports', '{content,errors}');
--> statement-breakpoint
SELECT pms_log_changes_of('departments', 'departments');
--> statement-breakpoint
SELECT pms_log_changes_of('users', 'users');
--> statement-breakpoint
SELECT pms_log_changes_of('module_access', 'module_access');
--> statement-breakpoint
SELECT pms_log_changes_of('api_tokens', 'api_tokens', '{token_hash}');
--> statement-breakpoint
SELECT pms_log_changes_of('activity_logs', 'activity_logs', '{changes}');
--> statement-breakpoint
SELECT pms_log_changes_of('webhook_endpoints', 'webhooks', '{secret}');
--> statement-breakpoint
SELECT pms_log_changes_of('webhook_deliveries', 'webhook_deliveries', '{payload}');
--> statement-breakpoint
-- Users are listed by their department's name: a department's change changes what user lists answer.
CREATE TRIGGER pms_log_touch_users AFTER INSERT OR UPDATE OR DELETE ON departments FOR EACH STATEMENT EXECUTE FUNCTION pms_log_touch('users');
