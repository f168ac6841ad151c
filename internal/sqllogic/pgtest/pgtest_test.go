package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStartPostgres(t *testing.T) {
	dsn := StartPostgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var tz string
	var two int
	if err := conn.QueryRow(ctx, "SELECT current_setting('TimeZone'), 1+1").Scan(&tz, &two); err != nil {
		t.Fatal(err)
	}
	if tz != "UTC" || two != 2 {
		t.Fatalf("got TimeZone %q and 1+1 = %d", tz, two)
	}
}
