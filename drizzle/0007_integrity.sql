-- Deleted users keep their e-mail (references show who it was); the address is unique among live users only.
DROP INDEX "users_email_key";--> statement-breakpoint
CREATE UNIQUE INDEX "users_email_key" ON "users" USING btree ("email") WHERE "users"."deleted_at" is null;--> statement-breakpoint
-- Better Auth reads and writes users through this view, so a deleted user can neither sign in, nor ask for a reset,
-- nor be found by a reset token. An updatable view: `select *` is expanded now, so a column added to users later
-- needs the view created again.
CREATE VIEW "live_users" AS SELECT * FROM "users" WHERE "deleted_at" IS NULL;--> statement-breakpoint
-- Codes derived before codes were unique: a later duplicate gets -2, -3, … (the oldest keeps its code).
UPDATE "inventory_units" u SET "inventory_code" = d."inventory_code" || '-' || d.n
FROM (
  SELECT "id", "inventory_code", row_number() OVER (PARTITION BY "inventory_code" ORDER BY "created_at", "id") AS n
  FROM "inventory_units"
) d
WHERE u."id" = d."id" AND d.n > 1;--> statement-breakpoint
CREATE UNIQUE INDEX "inventory_units_code_key" ON "inventory_units" USING btree ("inventory_code");--> statement-breakpoint
-- Reset tokens die when the account changes, whichever code path changes it (Better Auth's included): a new
-- password (reset, change, an administrator's PATCH), a new e-mail, or the user's deletion.
CREATE OR REPLACE FUNCTION pms_forget_reset_tokens() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM "verifications" WHERE "identifier" LIKE 'reset-password:%' AND "value" = to_jsonb(NEW) ->> TG_ARGV[0];
  RETURN NULL;
END $$;--> statement-breakpoint
CREATE TRIGGER accounts_credential_set AFTER INSERT ON "accounts" FOR EACH ROW WHEN (NEW."password" IS NOT NULL) EXECUTE FUNCTION pms_forget_reset_tokens('user_id');--> statement-breakpoint
CREATE TRIGGER accounts_password_changed AFTER UPDATE OF "password" ON "accounts" FOR EACH ROW WHEN (OLD."password" IS DISTINCT FROM NEW."password") EXECUTE FUNCTION pms_forget_reset_tokens('user_id');--> statement-breakpoint
CREATE TRIGGER users_identity_changed AFTER UPDATE OF "email", "deleted_at" ON "users" FOR EACH ROW WHEN (OLD."email" IS DISTINCT FROM NEW."email" OR OLD."deleted_at" IS DISTINCT FROM NEW."deleted_at") EXECUTE FUNCTION pms_forget_reset_tokens('id');
--> statement-breakpoint
-- A record's history: activity logs filtered by resource (and resource_id, indexed since 0000).
CREATE INDEX "activity_logs_resource_name_idx" ON "activity_logs" USING btree ("resource","created_at","id");
