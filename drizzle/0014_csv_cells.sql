-- A text value as one CSV cell (RFC 4180), exactly as src/data/export.ts's `cell` writes it in JavaScript: empty for
-- null; a leading = + - @ tab or CR prefixed with ' (no spreadsheet formula); quoted, its quotes doubled, when it holds
-- a comma, a quote or a line break. A plain SQL expression, so PostgreSQL inlines it: an export of a million rows has
-- its lines formatted by the database, beside the service, instead of by the service's one thread.
CREATE OR REPLACE FUNCTION pms_csv_text(v text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN v IS NULL THEN ''
    WHEN strpos(v, '"') > 0 OR strpos(v, ',') > 0 OR strpos(v, E'\n') > 0 OR strpos(v, E'\r') > 0
      THEN '"' || CASE WHEN left(v, 1) IN ('=', '+', '-', '@', E'\t', E'\r') THEN '''' ELSE '' END || replace(v, '"', '""') || '"'
    WHEN left(v, 1) IN ('=', '+', '-', '@', E'\t', E'\r') THEN '''' || v
    ELSE v
  END
$$;
