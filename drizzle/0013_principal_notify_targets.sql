-- Principal notifications name exactly what changed (src/auth/principals.ts): `user:<id>` for a user or their
-- permissions (every principal of that user), `session:<id>` for one session and `session:token:<id>` for one API token
-- (only the principals resolved from it). A sign-in inserts a session and notifies nothing: it changes no cached
-- principal. Before, every notification named a user, and each one stopped caching for everyone while it was resolved.
CREATE OR REPLACE FUNCTION pms_principal_notify() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  prefix text := TG_ARGV[0];
  column_name text := TG_ARGV[1];
BEGIN
  IF TG_OP <> 'INSERT' THEN
    PERFORM pg_notify('pms_principals', prefix || (to_jsonb(OLD) ->> column_name));
  END IF;
  IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR (to_jsonb(OLD) ->> column_name) IS DISTINCT FROM (to_jsonb(NEW) ->> column_name)) THEN
    PERFORM pg_notify('pms_principals', prefix || (to_jsonb(NEW) ->> column_name));
  END IF;
  RETURN NULL;
END $$;
--> statement-breakpoint
DROP TRIGGER IF EXISTS users_principal_changed ON users;
--> statement-breakpoint
CREATE TRIGGER users_principal_changed AFTER UPDATE OR DELETE ON users FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('user:', 'id');
--> statement-breakpoint
DROP TRIGGER IF EXISTS module_access_principal_changed ON module_access;
--> statement-breakpoint
CREATE TRIGGER module_access_principal_changed AFTER INSERT OR UPDATE OR DELETE ON module_access FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('user:', 'user_id');
--> statement-breakpoint
DROP TRIGGER IF EXISTS sessions_principal_changed ON sessions;
--> statement-breakpoint
CREATE TRIGGER sessions_principal_changed AFTER UPDATE OR DELETE ON sessions FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('session:', 'id');
--> statement-breakpoint
DROP TRIGGER IF EXISTS api_tokens_principal_changed ON api_tokens;
--> statement-breakpoint
CREATE TRIGGER api_tokens_principal_changed AFTER DELETE ON api_tokens FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('session:token:', 'id');
--> statement-breakpoint
DROP TRIGGER IF EXISTS api_tokens_principal_updated ON api_tokens;
--> statement-breakpoint
CREATE TRIGGER api_tokens_principal_updated AFTER UPDATE OF permissions, expires_at, user_id, token_hash ON api_tokens FOR EACH ROW EXECUTE FUNCTION pms_principal_notify('session:token:', 'id');
--> statement-breakpoint
DROP FUNCTION IF EXISTS pms_principal_changed();
