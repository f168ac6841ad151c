# The one test command: what `.ci/run` runs and what a newcomer runs.
# It installs what the tests need (Debian's PostgreSQL server, used as a
# correctness oracle by the sqllogictest runner's tests; Java and the
# PostgreSQL JDBC driver, psql and psycopg2 for the client tests; Chromium
# for the dashboard's browser test) and fails loudly when something cannot
# be had: under it a client test whose program is missing fails instead of
# skipping (SLUICE_TEST_STRICT). Tests save screenshots and such under
# artifacts/ (SLUICE_ARTIFACTS).

GO ?= go
export CGO_ENABLED = 1

.PHONY: test deps vet unit fuzz bench playground

test: deps vet unit fuzz

deps:
	@command -v $(GO) >/dev/null || { echo "error: go not found on PATH (need Go 1.26)"; exit 1; }
	@command -v gcc >/dev/null || { echo "error: gcc not found: cgo (pg_query_go) needs it; apt-get install gcc"; exit 1; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing the PostgreSQL server (test oracle)"; \
		if [ "$$(id -u)" = 0 ]; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null) || \
				{ echo "error: apt-get install postgresql failed"; exit 1; }; \
		else \
			echo "error: PostgreSQL server missing; run: sudo apt-get install -y postgresql"; exit 1; \
		fi; }
	@ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { echo "error: initdb still missing after install"; exit 1; }
	@{ command -v javac >/dev/null && ls /usr/share/java/postgresql.jar >/dev/null 2>&1; } || { \
		echo "installing Java and the PostgreSQL JDBC driver (client tests)"; \
		if [ "$$(id -u)" = 0 ]; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless libpostgresql-jdbc-java >/dev/null) || \
				{ echo "error: apt-get install default-jdk-headless libpostgresql-jdbc-java failed"; exit 1; }; \
		else \
			echo "error: Java or the JDBC driver missing; run: sudo apt-get install -y default-jdk-headless libpostgresql-jdbc-java"; exit 1; \
		fi; }
	@{ command -v java >/dev/null && command -v javac >/dev/null && ls /usr/share/java/postgresql.jar >/dev/null 2>&1; } || \
		{ echo "error: java, javac or /usr/share/java/postgresql.jar still missing after install"; exit 1; }
	@{ command -v psql >/dev/null && /usr/bin/python3 -c 'import psycopg2' 2>/dev/null; } || { \
		echo "installing psql and psycopg2 (client tests)"; \
		if [ "$$(id -u)" = 0 ]; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql-client python3-psycopg2 >/dev/null) || \
				{ echo "error: apt-get install postgresql-client python3-psycopg2 failed"; exit 1; }; \
		else \
			echo "error: psql or psycopg2 missing; run: sudo apt-get install -y postgresql-client python3-psycopg2"; exit 1; \
		fi; }
	@{ command -v psql >/dev/null && /usr/bin/python3 -c 'import psycopg2'; } || \
		{ echo "error: psql or psycopg2 still missing after install"; exit 1; }
	@test -x /usr/bin/chromium || { \
		echo "installing Chromium (the dashboard's browser test)"; \
		if [ "$$(id -u)" = 0 ]; then \
			(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || \
				{ echo "error: apt-get install chromium failed"; exit 1; }; \
		else \
			echo "error: Chromium missing; run: sudo apt-get install -y chromium"; exit 1; \
		fi; }
	@test -x /usr/bin/chromium || { echo "error: /usr/bin/chromium still missing after install"; exit 1; }

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# -p 1 would be slower; two packages at a time matches the 2-core CI.
unit:
	SLUICE_TEST_STRICT=1 SLUICE_ARTIFACTS=$(CURDIR)/artifacts $(GO) test -race -timeout 25m ./...

# Every fuzz target for a fixed number of executions (a crasher is saved
# under the package's testdata/fuzz/<target>/ and then runs with the unit
# tests). Counts, not durations: a duration budget trips Go's fuzz
# coordinator race (go.dev/issue/75804, unfixed in 1.26), which fails a
# target with a bare "context deadline exceeded" on a loaded machine. Each
# count is about 5-10 s on the 2-core CI; FUZZSCALE multiplies them all.
FUZZSCALE ?= 1
FUZZ_TARGETS = \
	./internal/pgwire:FuzzMessageLoop:20000 ./internal/pgwire:FuzzStartup:30000 \
	./internal/pgwire:FuzzCopyText:30000 ./internal/sql/planner:FuzzPlan:40000 \
	./internal/types:FuzzParseDatum:150000 ./internal/types/codec:FuzzDecodeValue:250000 \
	./internal/types/codec:FuzzDecodeKey:250000 ./internal/types/codec:FuzzKeyRoundTrip:60000 \
	./internal/types/codec:FuzzDecodeValueInto:30000

fuzz:
	@log=$$(mktemp); trap 'rm -f $$log' EXIT; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; rest=$${t#*:}; name=$${rest%%:*}; n=$$(( $${rest##*:} * $(FUZZSCALE) )); \
		echo "fuzz $$name ($$pkg) for $${n} executions"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $${n}x $$pkg > $$log 2>&1 || \
			{ grep -v '^fuzz: elapsed' $$log; exit 1; }; \
		! grep -q 'no fuzz tests' $$log || { echo "error: no fuzz target $$name in $$pkg"; exit 1; }; \
	done

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

playground:
	$(GO) run ./cmd/sluice
