package sqllogic

import (
	"context"
	"fmt"
	"net/url"
	"time"
)

// FreshDatabases returns a BeforeFile hook that gives every file its own
// empty database on the server adminDSN points at (CREATE DATABASE, then
// DROP DATABASE … WITH (FORCE) after the file), because the peer files
// reuse table names such as t and t1. It suits Postgres as the server
// under test; a server without CREATE DATABASE needs a hook that starts a
// fresh server instead.
func FreshDatabases(adminDSN string) func(ctx context.Context, path string) (string, func(), error) {
	n := 0
	return func(ctx context.Context, path string) (string, func(), error) {
		n++
		name := fmt.Sprintf("sluice_slt_%d_%d", time.Now().UnixNano(), n)
		if err := adminExec(ctx, adminDSN, "CREATE DATABASE "+name); err != nil {
			return "", nil, err
		}
		u, err := url.Parse(adminDSN)
		if err != nil {
			return "", nil, fmt.Errorf("parse admin DSN: %w", err)
		}
		u.Path = "/" + name
		cleanup := func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_ = adminExec(ctx, adminDSN, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		}
		return u.String(), cleanup, nil
	}
}

func adminExec(ctx context.Context, dsn, sql string) error {
	conn, err := connectSimple(ctx, dsn)
	if err != nil {
		return fmt.Errorf("admin connection: %w", err)
	}
	defer conn.Close(ctx)
	if out := execSimple(ctx, conn, sql); out.err != nil {
		return fmt.Errorf("%s: %w", sql, out.err)
	}
	return nil
}
