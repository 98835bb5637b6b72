CREATE TABLE "used_totp_codes" (
	"user_id" uuid NOT NULL,
	"code" text NOT NULL,
	"used_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "used_totp_codes" ADD CONSTRAINT "used_totp_codes_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "used_totp_codes_user_code_key" ON "used_totp_codes" USING btree ("user_id","code");