-- A lead's story and follow-ups: activities written on a lead, follow-up tasks, the link of a reservation
-- and of an inquiry to their lead, the per-user setting of the morning e-mail and the days it was sent.
CREATE TABLE "crm_activities" (
	"id" uuid PRIMARY KEY NOT NULL,
	"lead_id" uuid NOT NULL REFERENCES "leads"("id") ON DELETE CASCADE,
	"kind" text NOT NULL,
	"body" text,
	"outcome" text,
	"place" text,
	"occurred_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"author_id" uuid REFERENCES "users"("id"),
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "crm_activities_kind_check" CHECK ("kind" IN ('note', 'call', 'email', 'meeting', 'site_visit')),
	CONSTRAINT "crm_activities_outcome_check" CHECK ("outcome" IS NULL OR ("kind" = 'call' AND "outcome" IN ('answered', 'no_answer', 'busy', 'voicemail', 'wrong_number'))),
	CONSTRAINT "crm_activities_place_check" CHECK ("place" IS NULL OR "kind" IN ('meeting', 'site_visit'))
);
--> statement-breakpoint
CREATE INDEX "crm_activities_created_idx" ON "crm_activities" USING btree ("created_at","id");
--> statement-breakpoint
CREATE INDEX "crm_activities_lead_idx" ON "crm_activities" USING btree ("lead_id","occurred_at","id");
--> statement-breakpoint
CREATE INDEX "crm_activities_author_idx" ON "crm_activities" USING btree ("author_id","created_at","id");
--> statement-breakpoint
CREATE TABLE "crm_tasks" (
	"id" uuid PRIMARY KEY NOT NULL,
	"title" text NOT NULL,
	"notes" text,
	"due_at" timestamp (3) with time zone NOT NULL,
	"assigned_to" uuid NOT NULL REFERENCES "users"("id"),
	"lead_id" uuid REFERENCES "leads"("id") ON DELETE SET NULL,
	"reservation_id" uuid REFERENCES "reservations"("id") ON DELETE SET NULL,
	"inquiry_id" uuid REFERENCES "inquiries"("id") ON DELETE SET NULL,
	"done_at" timestamp (3) with time zone,
	"done_by" uuid REFERENCES "users"("id"),
	"created_by" uuid REFERENCES "users"("id"),
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "crm_tasks_done_check" CHECK ("done_by" IS NULL OR "done_at" IS NOT NULL)
);
--> statement-breakpoint
CREATE INDEX "crm_tasks_created_idx" ON "crm_tasks" USING btree ("created_at","id");
--> statement-breakpoint
CREATE INDEX "crm_tasks_due_idx" ON "crm_tasks" USING btree ("due_at","id");
--> statement-breakpoint
CREATE INDEX "crm_tasks_assigned_idx" ON "crm_tasks" USING btree ("assigned_to","due_at","id");
--> statement-breakpoint
CREATE INDEX "crm_tasks_open_idx" ON "crm_tasks" USING btree ("due_at","assigned_to") WHERE "done_at" IS NULL;
--> statement-breakpoint
CREATE INDEX "crm_tasks_lead_idx" ON "crm_tasks" USING btree ("lead_id","done_at");
--> statement-breakpoint
CREATE INDEX "crm_tasks_reservation_idx" ON "crm_tasks" USING btree ("reservation_id");
--> statement-breakpoint
CREATE INDEX "crm_tasks_inquiry_idx" ON "crm_tasks" USING btree ("inquiry_id");
--> statement-breakpoint
ALTER TABLE "reservations" ADD COLUMN "lead_id" uuid REFERENCES "leads"("id") ON DELETE SET NULL;
--> statement-breakpoint
CREATE INDEX "reservations_lead_idx" ON "reservations" USING btree ("lead_id","created_at","id");
--> statement-breakpoint
ALTER TABLE "inquiries" ADD COLUMN "lead_id" uuid REFERENCES "leads"("id") ON DELETE SET NULL;
--> statement-breakpoint
CREATE INDEX "inquiries_lead_idx" ON "inquiries" USING btree ("lead_id");
--> statement-breakpoint
-- A lead's timeline finds the inquiries, subscription and campaign e-mails of its address and phone by index.
CREATE INDEX "inquiries_email_idx" ON "inquiries" USING btree ("email");
--> statement-breakpoint
CREATE INDEX "inquiries_phone_digits_idx" ON "inquiries" USING btree (regexp_replace("phone", '[^0-9]', '', 'g'));
--> statement-breakpoint
CREATE INDEX "campaign_deliveries_email_idx" ON "campaign_deliveries" USING btree ("email");
--> statement-breakpoint
CREATE TABLE "user_preferences" (
	"user_id" uuid PRIMARY KEY NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"task_digest" boolean DEFAULT true NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
-- One row per user and local day the morning e-mail went out (or is going out): two instances send it once.
CREATE TABLE "task_digests" (
	"user_id" uuid NOT NULL REFERENCES "users"("id") ON DELETE CASCADE,
	"day" date NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "task_digests_pkey" PRIMARY KEY ("user_id", "day")
);
--> statement-breakpoint
SELECT pms_log_changes_of('crm_activities', 'activities');
--> statement-breakpoint
SELECT pms_log_changes_of('crm_tasks', 'tasks');
