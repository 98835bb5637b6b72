-- Undo. An activity log may say which earlier entry it restores (a record set back to its state before or
-- after a change, or recreated from the trash): `restored_from` is that entry's id.
ALTER TABLE "activity_logs" ADD COLUMN "restored_from" uuid;
--> statement-breakpoint
-- The trash: one row per deleted cms or crm record (the DELETE request's record), keyed by its delete activity log (`id` is that log's id).
-- `record` is the whole row as it was (by column name), `deleted_with` the rows deleted in the same transaction (a
-- project's gallery images, rows a foreign key cascaded), `changed_with` the rows it changed (a unit freed by its
-- reservation's deletion, a foreign key set to null), so a restore recreates and sets back all of it. `owners`: the
-- users the record belonged to (its resource's ownership columns; null when it has none) for crm record scopes.
-- Kept TRASH_RETENTION_DAYS after the deletion, restored or not, then purged in batches.
CREATE TABLE "trash" (
	"id" uuid PRIMARY KEY NOT NULL,
	"module" text NOT NULL,
	"resource" text NOT NULL,
	"record_id" uuid NOT NULL,
	"title" text,
	"user_id" uuid,
	"owners" uuid[],
	"record" jsonb NOT NULL,
	"deleted_with" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"changed_with" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"deleted_at" timestamp (3) with time zone NOT NULL,
	"restored_at" timestamp (3) with time zone,
	"restored_by" uuid
);
--> statement-breakpoint
CREATE INDEX "trash_module_idx" ON "trash" USING btree ("module","deleted_at","id") WHERE "restored_at" IS NULL;
--> statement-breakpoint
CREATE INDEX "trash_deleted_idx" ON "trash" USING btree ("deleted_at","id");
--> statement-breakpoint
CREATE INDEX "trash_record_idx" ON "trash" USING btree ("record_id");
--> statement-breakpoint
-- Lists and totals of the trash are brought forward from the change log like every list (migration 0012); the
-- records themselves are not copied into it.
SELECT pms_log_changes_of('trash', 'trash', '{record,deleted_with,changed_with}');
