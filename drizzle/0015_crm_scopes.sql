-- CRM record scopes: each user's crm access says which records they see: `all` (every record, the default:
-- nothing changes for existing users), `department` (records owned by anyone in their department) or `own` (records
-- they own). A scope other than `all` belongs to the crm module only. Records say who created them (`created_by`,
-- null for the public website and imports), which with the assignee makes them someone's (src/data/resource.ts).
ALTER TABLE "module_access" ADD COLUMN "scope" text DEFAULT 'all' NOT NULL;
--> statement-breakpoint
ALTER TABLE "module_access" ADD CONSTRAINT "module_access_scope_check" CHECK ("scope" in ('all', 'department', 'own'));
--> statement-breakpoint
ALTER TABLE "module_access" ADD CONSTRAINT "module_access_scope_module_check" CHECK ("scope" = 'all' or "module" = 'crm');
--> statement-breakpoint
-- No foreign key on created_by: only the service sets it (the caller), users are never deleted (deleted_at), and a key
-- check on every create locked the creator's users row: 50 connections creating as one user queued on that row (a
-- third fewer creates a second).
ALTER TABLE "leads" ADD COLUMN "created_by" uuid;
--> statement-breakpoint
ALTER TABLE "inquiries" ADD COLUMN "created_by" uuid;
--> statement-breakpoint
CREATE INDEX "leads_created_by_idx" ON "leads" USING btree ("created_by","created_at","id");
--> statement-breakpoint
CREATE INDEX "reservations_created_by_idx" ON "reservations" USING btree ("created_by","created_at","id");
--> statement-breakpoint
CREATE INDEX "inquiries_created_by_idx" ON "inquiries" USING btree ("created_by","created_at","id");
--> statement-breakpoint
CREATE INDEX "inquiries_responded_by_idx" ON "inquiries" USING btree ("responded_by","created_at","id");
