CREATE TABLE "privacy_requests" (
	"id" uuid PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"origin" text DEFAULT 'request' NOT NULL,
	"requested_by" uuid,
	"email_hash" text,
	"phone_hash" text,
	"found" jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "privacy_requests_kind_check" CHECK ("privacy_requests"."kind" in ('export', 'erase')),
	CONSTRAINT "privacy_requests_origin_check" CHECK ("privacy_requests"."origin" in ('request', 'retention'))
);
--> statement-breakpoint
CREATE INDEX "privacy_requests_created_idx" ON "privacy_requests" USING btree ("created_at","id");--> statement-breakpoint
CREATE INDEX "privacy_requests_kind_idx" ON "privacy_requests" USING btree ("kind","created_at","id");--> statement-breakpoint
-- Its list's totals follow the change log like every list's; what was found and the hashes are never copied there.
SELECT pms_log_changes_of('privacy_requests', 'privacy_requests', '{found,email_hash,phone_hash}');
