package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNexmarkData(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if code := dispatch(context.Background(), []string{"nexmark-data", "-events", "5000", "-dir", dir, "-format", "csv"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), "100 people, 300 auctions, 4600 bids") {
		t.Fatalf("output %q", out.String())
	}
	for file, lines := range map[string]int{"person.csv": 100, "auction.csv": 300, "bid.csv": 4600} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n != lines {
			t.Errorf("%s: %d lines, want %d", file, n, lines)
		}
	}
	schema, err := os.ReadFile(filepath.Join(dir, "schema.sql"))
	if err != nil || !strings.Contains(string(schema), "CREATE TABLE bid (") {
		t.Fatalf("schema.sql: %v\n%s", err, schema)
	}
	for _, bad := range [][]string{{"nexmark-data"}, {"nexmark-data", "-dir", dir, "-format", "json"}, {"nexmark-data", "-dir", dir, "-events", "0"}} {
		if code := dispatch(context.Background(), bad, &out, &errOut); code != 2 {
			t.Errorf("%q: exit %d, want 2", bad, code)
		}
	}
}
