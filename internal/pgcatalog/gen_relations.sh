#!/bin/sh
# Regenerates relations_gen.go from a running PostgreSQL 15 server:
#   ./gen_relations.sh "host=/tmp port=5432 user=postgres"
set -e
cd "$(dirname "$0")"
{
	sed -n '1,9p' relations_gen.go
	psql "$1" -Atf gen_relations.sql
	echo "}"
} > relations_gen.go.new
mv relations_gen.go.new relations_gen.go
gofmt -w relations_gen.go
