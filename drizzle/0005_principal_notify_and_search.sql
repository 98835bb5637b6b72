-- Signed-in callers are cached per instance; any change to what a cached principal holds (its session, its user, its
-- permissions) notifies every instance at commit, whichever code path made it (Better Auth's included).
CREATE OR REPLACE FUNCTION pms_principal_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('pms_principals', to_jsonb(OLD) ->> TG_ARGV[0]);
  ELSE
    PERFORM pg_notify('pms_principals', to_jsonb(NEW) ->> TG_ARGV[0]);
    IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) ->> TG_ARGV[0]) IS DISTINCT FROM (to_jsonb(NEW) ->> TG_ARGV[0]) THEN
      PERFORM pg_notify('pms_principals', to_jsonb(OLD) ->> TG_ARGV[0]);
    END IF;
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
CREATE TRIGGER users_principal_changed AFTER UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION pms_principal_changed('id');
--> statement-breakpoint
CREATE TRIGGER sessions_principal_changed AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION pms_principal_changed('user_id');
--> statement-breakpoint
CREATE TRIGGER module_access_principal_changed AFTER INSERT OR UPDATE OR DELETE ON module_access FOR EACH ROW EXECUTE FUNCTION pms_principal_changed('user_id');
--> statement-breakpoint
-- `q` on leads (substring, case-insensitive) is served by trigram indexes at any size.
CREATE EXTENSION IF NOT EXISTS pg_trgm;
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS leads_first_name_trgm_idx ON leads USING gin (first_name gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS leads_last_name_trgm_idx ON leads USING gin (last_name gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS leads_email_trgm_idx ON leads USING gin (email gin_trgm_ops);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS leads_phone_trgm_idx ON leads USING gin (phone gin_trgm_ops);
