// Package crosscheck checks Sluice's Nexmark views against PostgreSQL:
// both load the same generated events (nexmark.Generator.Rows, as COPY
// input), Sluice maintains each query as a materialized view while the
// rows arrive, PostgreSQL runs the query over its tables, and the two
// must hold the same rows. The test in package nexmark runs it over a
// few thousand events in CI; sluice-bench nexmark-verify over a million.
package crosscheck
