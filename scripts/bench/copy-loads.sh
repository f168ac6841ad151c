#!/bin/bash
# copy-loads.sh SERVER FILE [N]: server CPU (user + system) and peak RSS of
# N COPY + FLUSH loads of FILE into fresh tables of one Sluice server, for
# comparing two server builds side by side (run them alternately; the
# machine is shared). FILE is the bids' COPY text:
#   go run ./cmd/sluice-bench ingest -rows 1000000 -write-bids /tmp/bids.txt
# Needs psql. Uses 127.0.0.1:4578/5698 and a data directory it removes.
set -eu
BIN=$1 FILE=$2 N=${3:-4}
DATA=$(mktemp -d)
trap 'kill $PID 2>/dev/null; wait $PID 2>/dev/null; rm -rf "$DATA"' EXIT
"$BIN" --listen-addr 127.0.0.1:4578 --dashboard-addr 127.0.0.1:5698 --data-dir "$DATA" > "$DATA.log" 2>&1 &
PID=$!
P="psql -h 127.0.0.1 -p 4578 -U root -d dev -qAt"
for _ in $(seq 100); do $P -c "select 1" > /dev/null 2>&1 && break; sleep 0.2; done
for n in $(seq "$N"); do
  $P -c "CREATE TABLE bid$n (auction bigint, bidder bigint, price bigint, channel varchar, url varchar, date_time timestamp, extra varchar)"
  sleep 2
  read -r u0 s0 f0 < <(awk '{print $14, $15, $10}' /proc/$PID/stat)
  $P -c "\\copy bid$n from '$FILE'"
  $P -c "FLUSH"
  read -r u1 s1 f1 < <(awk '{print $14, $15, $10}' /proc/$PID/stat)
  tck=$(getconf CLK_TCK)
  echo "load $n: cpu $(( (u1-u0+s1-s0) * 1000 / tck )) ms (user $(( (u1-u0) * 1000 / tck )), system $(( (s1-s0) * 1000 / tck ))), minor faults $((f1-f0)), $(grep VmHWM /proc/$PID/status | tr -s ' \t' ' ')"
done
