-- The change log's reads as functions whose plans always walk the (resource, xid) index. Run inline in a prepared
-- statement, the read was planned once per connection and the generic plan kept: planned while the log was nearly
-- empty (a fresh database, or just after a prune) it was a sequential scan and a sort, and it stayed one as the log
-- grew — 10 ms a request at 46,000 entries, on every list request beside a stream of writes. `enable_seqscan = off`
-- inside the functions keeps their cached plans on the index whatever the table's size when they were made.
CREATE OR REPLACE FUNCTION pms_change_rows(resource_name text, from_xid xid8, max_rows integer)
RETURNS TABLE (xid xid8, row_id uuid, before jsonb, after jsonb)
LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
BEGIN
  RETURN QUERY SELECT c.xid, c.row_id, c.before, c.after FROM change_log c
    WHERE c.resource = resource_name AND c.xid >= from_xid ORDER BY c.xid LIMIT max_rows;
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION pms_changed_since(resource_names text[], from_xid xid8)
RETURNS boolean
LANGUAGE plpgsql STABLE SET enable_seqscan = off AS $$
BEGIN
  RETURN EXISTS (SELECT 1 FROM change_log c WHERE c.resource = ANY (resource_names) AND c.xid >= from_xid);
END $$;
--> statement-breakpoint
-- A CSV cell (migration 0014's `pms_csv_text`, same output): the common value, with nothing to quote and no formula
-- start, is answered after four byte searches and one code point, without taking a one-character substring
-- (`left(v, 1)`, an allocation per cell) twice; exports are bound by PostgreSQL's CPU, mostly these cells.
CREATE OR REPLACE FUNCTION pms_csv_text(v text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN v IS NULL THEN ''
    WHEN strpos(v, '"') = 0 AND strpos(v, ',') = 0 AND strpos(v, E'\n') = 0 AND strpos(v, E'\r') = 0
      THEN CASE WHEN ascii(v) IN (61, 43, 45, 64, 9) THEN '''' || v ELSE v END
    ELSE '"' || CASE WHEN ascii(v) IN (61, 43, 45, 64, 9, 13) THEN '''' ELSE '' END || replace(v, '"', '""') || '"'
  END
$$;
