#!/bin/bash
# The reference stall in the playground, paused (docs/BENCHMARKS.md, "A late
# epoch's rows written as they come"): usage: pause-stall.sh BIN PORT STALL_SECONDS.
# Starts BIN on a fresh data directory (1 s barriers), creates t, sibling (a
# count of t) and amp (t's self-join on k), inserts 20 000 rows of key 1,
# waits STALL_SECONDS, pauses amp, then times (psql's \timing) PAUSE, an
# INSERT into t and a SELECT of sibling in one session: the SELECT waits for
# the stuck epochs' commit. The data directory is removed at the end.
set -u
BIN=$1 PORT=$2 STALL=$3
D=/tmp/pause-stall-$PORT
rm -rf $D; mkdir -p $D
$BIN -data-dir $D/data -listen-addr 127.0.0.1:$PORT -dashboard-addr 127.0.0.1:$((PORT+1000)) > $D/log 2>&1 &
PID=$!
S="psql -X -h 127.0.0.1 -p $PORT -U root -d dev -q"
until $S -c "select 1" >/dev/null 2>&1; do sleep 0.2; done
$S -c "CREATE TABLE t (k int, v int)" -c "CREATE MATERIALIZED VIEW sibling AS SELECT count(*) AS n FROM t" \
	-c "CREATE MATERIALIZED VIEW amp AS SELECT a.v, b.v AS w FROM t a JOIN t b ON a.k = b.k"
$S -c "INSERT INTO t SELECT 1, g FROM generate_series(1, 20000) g"
sleep $STALL
$S -At -c "SELECT 'amp rows at pause: ' || rows_out FROM sluice_catalog.jobs WHERE name = 'amp'"
# One session, timed by psql: PAUSE, then an INSERT into t and a SELECT of
# sibling, which waits for the stuck epochs' commit (its NOTICE says how long).
$S -c '\timing on' -c "ALTER MATERIALIZED VIEW amp PAUSE" -c "INSERT INTO t VALUES (2, 0)" -c "SELECT n FROM sibling" 2>&1 |
	grep -E "^Time|NOTICE"
$S -c "SELECT epoch, collect_seconds, commit_seconds FROM sluice_catalog.barriers ORDER BY epoch DESC LIMIT 12"
kill $PID; wait $PID 2>/dev/null
rm -rf $D
