// Package pgcatalog serves PostgreSQL's system catalogs, pg_catalog and
// information_schema, from Sluice's own catalog, so that psql's \d family,
// JDBC's DatabaseMetaData and GUI tools find what they look for.
//
// Every table and view Postgres 15 has in those two schemas exists here
// with all its columns, in Postgres's order and with the nearest Sluice
// type (relations_gen.go, generated from a real server): a query a client
// wrote for Postgres binds whole, as any other query, through the planner
// (a system scan) and runs in the batch executor, so joins, subqueries,
// aggregates and window functions behave as they do everywhere else.
// Relations Sluice has objects for (pg_class, pg_attribute, pg_type,
// pg_namespace, pg_constraint, information_schema.columns, …) have rows;
// the rest are empty, as they are in a Postgres with no such objects.
//
// An oid is a bigint here, and the reg* types are not types of their own:
// the planner turns 'name'::regclass into the relation's oid and, where a
// reg* value is shown or cast to text, the oid back into its name.
//
// The functions clients call on catalog rows (format_type,
// pg_get_userbyid, pg_get_expr, has_table_privilege, current_setting, …)
// are session functions (expr.Session); Funcs implements them over a
// Source, the catalog as one session sees it.
package pgcatalog
