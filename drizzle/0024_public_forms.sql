CREATE TABLE "newsletter_signups" (
	"id" uuid PRIMARY KEY NOT NULL,
	"email" text NOT NULL,
	"name" text,
	"token_hash" text NOT NULL,
	"mailed_at" timestamp (3) with time zone NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL,
	"consent_at" timestamp (3) with time zone NOT NULL,
	"consent_ip" text,
	"consent_user_agent" text,
	"consent_form" text,
	"consent_text" text NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "used_form_tokens" (
	"id" text PRIMARY KEY NOT NULL,
	"expires_at" timestamp (3) with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_at" timestamp (3) with time zone;--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_ip" text;--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_user_agent" text;--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_form" text;--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_text" text;--> statement-breakpoint
ALTER TABLE "newsletter_subscriptions" ADD COLUMN "consent_method" text;--> statement-breakpoint
CREATE UNIQUE INDEX "newsletter_signups_email_key" ON "newsletter_signups" USING btree ("email");--> statement-breakpoint
CREATE UNIQUE INDEX "newsletter_signups_token_key" ON "newsletter_signups" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "newsletter_signups_expires_idx" ON "newsletter_signups" USING btree ("expires_at");--> statement-breakpoint
CREATE INDEX "used_form_tokens_expires_idx" ON "used_form_tokens" USING btree ("expires_at");