-- In-app notifications for staff: each user's inbox (what it is about, the record it names, when it was read) and how
-- each user wants each kind delivered (in the app, by e-mail, both, none; no row: the kind's default).
CREATE TABLE "notification_preferences" (
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"delivery" text NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "notification_preferences_pkey" PRIMARY KEY("user_id","kind"),
	CONSTRAINT "notification_preferences_delivery_check" CHECK ("delivery" in ('in_app', 'email', 'both', 'none'))
);
--> statement-breakpoint
CREATE TABLE "notifications" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"kind" text NOT NULL,
	"title" text NOT NULL,
	"body" text NOT NULL,
	"resource" text,
	"record_id" uuid,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"read_at" timestamp (3) with time zone,
	CONSTRAINT "notifications_kind_check" CHECK ("kind" in ('lead_assigned', 'inquiry_received', 'mention', 'lead_to_claim', 'follow_up_due', 'speed_to_lead')),
	CONSTRAINT "notifications_record_check" CHECK (("notifications"."resource" is null) = ("notifications"."record_id" is null))
);
--> statement-breakpoint
ALTER TABLE "notification_preferences" ADD CONSTRAINT "notification_preferences_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "notifications" ADD CONSTRAINT "notifications_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "notifications_user_idx" ON "notifications" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "notifications_unread_idx" ON "notifications" USING btree ("user_id","created_at","id") WHERE "notifications"."read_at" is null;
--> statement-breakpoint
-- Written to the change log like every table a list reads (title and body left out: the log needs only who and when).
SELECT pms_log_changes_of('notifications', 'notifications', '{title,body}');
