CREATE TABLE "api_tokens" (
	"id" uuid PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"name" text NOT NULL,
	"token_hash" text NOT NULL,
	"prefix" text NOT NULL,
	"permissions" jsonb NOT NULL,
	"expires_at" timestamp (3) with time zone,
	"last_used_at" timestamp (3) with time zone,
	"created_at" timestamp (3) with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "api_tokens" ADD CONSTRAINT "api_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "api_tokens_hash_key" ON "api_tokens" USING btree ("token_hash");--> statement-breakpoint
CREATE INDEX "api_tokens_user_idx" ON "api_tokens" USING btree ("user_id","created_at","id");--> statement-breakpoint
CREATE INDEX "api_tokens_created_idx" ON "api_tokens" USING btree ("created_at","id");--> statement-breakpoint
-- A token revoked, narrowed or expired is forgotten by every instance's principal cache at commit; only its use
-- (last_used_at) is not news.
CREATE TRIGGER api_tokens_principal_changed AFTER DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION pms_principal_changed('user_id');
--> statement-breakpoint
CREATE TRIGGER api_tokens_principal_updated AFTER UPDATE OF permissions, expires_at, user_id, token_hash ON api_tokens FOR EACH ROW EXECUTE FUNCTION pms_principal_changed('user_id');
