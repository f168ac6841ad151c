package session

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// guiQuery is a catalog query a GUI tool or driver sends on connect or
// when it opens a schema, and what its answer must show.
type guiQuery struct {
	sql  string
	args []any
	// minRows is the least number of rows a sensible answer has.
	minRows int
	// want are strings some row's text must contain, all of them.
	want []string
	// absent are strings no row may contain.
	absent []string
}

// guiQueries are taken from what DBeaver, pgAdmin, DataGrip and the JDBC
// driver send (their texts, lightly trimmed), against a database with
// table items and view cheap.
func guiQueries() []guiQuery {
	return []guiQuery{
		{sql: "SELECT version()", minRows: 1, want: []string{"PostgreSQL", "Sluice"}},
		{sql: "SELECT current_schema(), session_user", minRows: 1, want: []string{"public", "root"}},
		{sql: "select current_database() as a, current_schemas(false) as b", minRows: 1, want: []string{"dev", "public"}},
		{sql: "SELECT set_config('bytea_output', 'hex', false)", minRows: 1, want: []string{"hex"}},
		{sql: "select pg_catalog.txid_current()::varchar::bigint as current_txid", minRows: 1},
		{sql: "SHOW search_path", minRows: 1, want: []string{"public"}},
		{sql: "SHOW ALL", minRows: 5, want: []string{"timezone"}},
		{sql: "SELECT name, setting FROM pg_catalog.pg_settings WHERE name = 'server_encoding'", minRows: 1, want: []string{"UTF8"}},
		// DBeaver
		{sql: "SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datallowconn AND NOT datistemplate OR db.datname = $1 ORDER BY db.datname",
			args: []any{"dev"}, minRows: 1, want: []string{"dev"}},
		{sql: "SELECT n.oid,n.*,d.description FROM pg_catalog.pg_namespace n LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=n.oid AND d.objsubid=0 AND d.classoid='pg_namespace'::regclass ORDER BY nspname",
			minRows: 3, want: []string{"public"}},
		{sql: "SELECT c.oid,c.*,d.description,pg_catalog.pg_get_expr(c.relpartbound, c.oid) as partition_expr, pg_catalog.pg_get_partkeydef(c.oid) as partition_key FROM pg_catalog.pg_class c LEFT OUTER JOIN pg_catalog.pg_description d ON d.objoid=c.oid AND d.objsubid=0 AND d.classoid='pg_class'::regclass WHERE c.relnamespace=2200 AND c.relkind not in ('i','I','c')",
			minRows: 2, want: []string{"items"}},
		{sql: "SELECT t.oid,t.*,c.relkind,format_type(nullif(t.typbasetype, 0), t.typtypmod) as base_type_name, d.description FROM pg_catalog.pg_type t LEFT OUTER JOIN pg_catalog.pg_class c ON c.oid=t.typrelid LEFT OUTER JOIN pg_catalog.pg_description d ON t.oid=d.objoid WHERE t.typname IS NOT NULL AND (c.relkind IS NULL OR c.relkind = 'c')",
			minRows: 10, want: []string{"int4"}},
		{sql: "SELECT c.relname,a.*,pg_catalog.pg_get_expr(ad.adbin, ad.adrelid, true) as def_value,dsc.description FROM pg_catalog.pg_attribute a INNER JOIN pg_class c ON (a.attrelid=c.oid) LEFT OUTER JOIN pg_catalog.pg_attrdef ad ON (a.attrelid=ad.adrelid AND a.attnum = ad.adnum) LEFT OUTER JOIN pg_catalog.pg_description dsc ON (c.oid=dsc.objoid AND a.attnum = dsc.objsubid) WHERE NOT a.attisdropped AND c.relkind not in ('i','I','c') AND c.relname = 'items' ORDER BY a.attnum",
			minRows: 3, want: []string{"price 1700"}},
		{sql: "select string_agg(word, ',') from pg_catalog.pg_get_keywords() where word <> ALL ('{a,an,and}'::text[])", minRows: 1},
		// pgAdmin
		{sql: "SELECT db.oid as did, db.datname, db.datallowconn, pg_encoding_to_char(db.encoding) AS serverencoding, has_database_privilege(db.oid, 'CREATE') as cancreate, datistemplate FROM pg_catalog.pg_database db WHERE db.datname = current_database()",
			minRows: 1, want: []string{"dev", "UTF8"}},
		{sql: "SELECT roles.oid as id, roles.rolname as name, roles.rolsuper as is_superuser, CASE WHEN roles.rolsuper THEN true ELSE roles.rolcreaterole END as can_create_role FROM pg_catalog.pg_roles as roles WHERE rolname = current_user",
			minRows: 1, want: []string{"root"}},
		{sql: `SELECT nsp.oid, nsp.nspname as name, pg_catalog.has_schema_privilege(nsp.oid, 'CREATE') as can_create FROM pg_catalog.pg_namespace nsp WHERE nsp.nspname NOT LIKE E'pg\\_%' AND NOT (nsp.nspname = 'information_schema') ORDER BY nspname`,
			minRows: 1, want: []string{"public"}, absent: []string{"pg_catalog"}},
		{sql: "SELECT rel.oid, rel.relname AS name, (SELECT count(*) FROM pg_catalog.pg_trigger WHERE tgrelid=rel.oid AND tgisinternal = FALSE) AS triggercount FROM pg_catalog.pg_class rel WHERE rel.relkind IN ('r','s','t','p') AND rel.relnamespace = 2200::oid ORDER BY rel.relname",
			minRows: 1, want: []string{"items 0"}, absent: []string{"cheap"}},
		// DataGrip
		{sql: "select N.oid::bigint as id, datname as name, D.description, datistemplate as is_template, datallowconn as allow_connections, pg_catalog.pg_get_userbyid(N.datdba) as \"owner\" from pg_catalog.pg_database N left join pg_catalog.pg_shdescription D on N.oid = D.objoid order by case when datname = pg_catalog.current_database() then -1::bigint else N.oid::bigint end",
			minRows: 1, want: []string{"dev", "root"}},
		{sql: "select N.oid::bigint as id, nspname as name, D.description, pg_catalog.pg_get_userbyid(N.nspowner) as \"owner\" from pg_catalog.pg_namespace N left join pg_catalog.pg_description D on N.oid = D.objoid order by case when nspname = pg_catalog.current_schema() then -1::bigint else N.oid::bigint end",
			minRows: 3, want: []string{"public"}},
		// information_schema
		{sql: "SELECT schema_name FROM information_schema.schemata ORDER BY schema_name", minRows: 3, want: []string{"public"}},
		{sql: "SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name",
			minRows: 1, want: []string{"public items BASE TABLE"}},
		{sql: "SELECT column_name, data_type, is_nullable, ordinal_position FROM information_schema.columns WHERE table_name = $1 ORDER BY ordinal_position",
			args: []any{"items"}, minRows: 3, want: []string{"id integer NO 1", "label character varying YES 2", "price numeric YES 3"}},
		{sql: "SELECT conname, contype, conkey, pg_catalog.pg_get_constraintdef(oid) FROM pg_catalog.pg_constraint WHERE conrelid = 'items'::regclass",
			minRows: 1, want: []string{"items_pkey p [1] PRIMARY KEY (id)"}},
		{sql: "SELECT current_setting('server_version_num')::int >= 90600", minRows: 1, want: []string{"true"}},
		// Counting and grouping, as tools do for their navigators.
		{sql: "SELECT relkind, count(*) FROM pg_catalog.pg_class WHERE relnamespace = 2200 GROUP BY relkind ORDER BY relkind",
			minRows: 2, want: []string{"m 1", "r 1"}},
		{sql: "SELECT a.attname, row_number() OVER (PARTITION BY a.attrelid ORDER BY a.attnum DESC) AS rn FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class c ON a.attrelid = c.oid WHERE c.relname = 'items' ORDER BY rn",
			minRows: 3, want: []string{"price 1", "id 3"}},
	}
}

// TestGUIToolQueries runs the catalog queries GUI tools send on connect,
// over pgx's extended protocol (as the tools' JDBC drivers do), and
// checks each answers with sensible rows.
func TestGUIToolQueries(t *testing.T) {
	p := startPlayground(t)
	c := connect(t, p)
	exec(t, c, "CREATE TABLE items (id int PRIMARY KEY, label varchar, price numeric)")
	exec(t, c, "CREATE MATERIALIZED VIEW cheap AS SELECT id, label FROM items WHERE price < 10")
	for _, q := range guiQueries() {
		rows, err := textRows(c, q.sql, q.args...)
		if err != nil {
			t.Errorf("%s: %v", q.sql, err)
			continue
		}
		if len(rows) < q.minRows {
			t.Errorf("%s: %d rows, want at least %d: %q", q.sql, len(rows), q.minRows, rows)
		}
		all := strings.Join(rows, "\n")
		for _, w := range q.want {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no row contains %q:\n%s", q.sql, w, all)
			}
		}
		for _, a := range q.absent {
			if strings.Contains(all, a) {
				t.Errorf("%s: a row contains %q:\n%s", q.sql, a, all)
			}
		}
	}
}

// textRows runs sql over the extended protocol and renders each row's
// values space-separated, NULL as NULL.
func textRows(c *pgx.Conn, sql string, args ...any) ([]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rows, err := c.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return nil, err
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = fmt.Sprint(v)
			}
		}
		out = append(out, strings.Join(parts, " "))
	}
	return out, rows.Err()
}
