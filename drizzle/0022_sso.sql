CREATE TABLE "sso_providers" (
	"id" uuid PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"issuer" text NOT NULL,
	"client_id" text NOT NULL,
	"client_secret" text NOT NULL,
	"scopes" text DEFAULT 'openid email profile' NOT NULL,
	"enabled" boolean DEFAULT true NOT NULL,
	"jit" boolean DEFAULT false NOT NULL,
	"jit_department_id" uuid,
	"jit_grants" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "sso_required" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "sso_providers" ADD CONSTRAINT "sso_providers_jit_department_id_departments_id_fk" FOREIGN KEY ("jit_department_id") REFERENCES "public"."departments"("id") ON DELETE set null ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "sso_providers_created_idx" ON "sso_providers" USING btree ("created_at","id");--> statement-breakpoint
-- Providers are listed like any resource (the change log keeps their totals exact); the client secret is never copied.
SELECT pms_log_changes_of('sso_providers', 'sso_providers', '{client_secret}');
