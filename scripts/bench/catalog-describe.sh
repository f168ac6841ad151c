#!/bin/bash
# Side by side cost of psql's \d family (docs/BENCHMARKS.md, "Catalog queries planned
# like any query"): usage: catalog-describe.sh BIN PORT ROUNDS; prints the
# loop's wall seconds and the server's CPU seconds for ROUNDS x (\d items,
# \d cheap, \dt, \du) on a fresh in-memory server with 22 relations.
set -u
BIN=$1 PORT=$2 N=$3
rm -rf /tmp/cb_$PORT; mkdir -p /tmp/cb_$PORT
$BIN -in-memory -listen-addr 127.0.0.1:$PORT -dashboard-addr 127.0.0.1:$((PORT+1000)) > /tmp/cb_$PORT/log 2>&1 &
PID=$!
S="psql -X -h 127.0.0.1 -p $PORT -U root -d dev -q"
until $S -c "select 1" >/dev/null 2>&1; do sleep 0.2; done
$S -c "CREATE TABLE items (id int PRIMARY KEY, label varchar(8) DEFAULT 'none', price numeric(10,2) NOT NULL)" -c "CREATE MATERIALIZED VIEW cheap AS SELECT id, label FROM items WHERE price < 10" >/dev/null
for i in $(seq 1 20); do $S -c "CREATE TABLE t$i (a int PRIMARY KEY, b varchar, c numeric)" >/dev/null; done
c0=$(awk '{print $14+$15}' /proc/$PID/stat)
t0=$(date +%s.%N)
for i in $(seq 1 $N); do $S -c '\d items' -c '\d cheap' -c '\dt' -c '\du' >/dev/null; done
t1=$(date +%s.%N)
c1=$(awk '{print $14+$15}' /proc/$PID/stat)
kill $PID; wait $PID 2>/dev/null
echo "$(basename $BIN) wall=$(echo "$t1 - $t0" | bc) cpu=$(echo "($c1 - $c0)/100" | bc -l | cut -c1-6)"
