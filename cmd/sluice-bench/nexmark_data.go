package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-db/sluice/internal/nexmark"
)

// nexmark-data writes generated Nexmark events as the person, auction and
// bid tables' rows, with the tables' DDL, for loading the same events into
// PostgreSQL, Sluice or any other system:
//
//	sluice-bench nexmark-data -events 1000000 -dir /tmp/nx
//	psql -f /tmp/nx/schema.sql; \copy bid FROM '/tmp/nx/bid.txt' ...
//
// It prints how fast the generator went: the ceiling of any query fed
// from it in this process.

type nexmarkDataConfig struct {
	events, first int64
	dir, format   string
}

func runNexmarkData(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c nexmarkDataConfig
	fs := flag.NewFlagSet("sluice-bench nexmark-data", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Int64Var(&c.events, "events", 1_000_000, "number of events to write (1:3:46 people, auctions and bids)")
	fs.Int64Var(&c.first, "first", 0, "number of the first event")
	fs.StringVar(&c.dir, "dir", "", "directory to write schema.sql and person, auction and bid files into (required)")
	fs.StringVar(&c.format, "format", "copy", "row format: copy (PostgreSQL COPY text, .txt) or csv (.csv)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	f, ext, err := c.check(fs.NArg())
	if err != nil {
		return usageError{err}
	}
	g, err := nexmark.NewGenerator(nexmark.DefaultConfig())
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	cpu0, t0 := processCPU(), time.Now()
	counts, err := writeNexmark(ctx, g, c, f, ext)
	if err != nil {
		return err
	}
	wall, cpu := time.Since(t0), processCPU()-cpu0
	if err := os.WriteFile(filepath.Join(c.dir, "schema.sql"), []byte(strings.Join(nexmark.CreateTable[:], ";\n")+";\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "events %d..%d into %s: %d people, %d auctions, %d bids\n", c.first, c.first+c.events-1, c.dir, counts[0], counts[1], counts[2])
	fmt.Fprintf(stdout, "generated and written in %.2f s wall, %.2f s cpu: %.0f events per cpu-second\n",
		wall.Seconds(), cpu.Seconds(), float64(c.events)/max(cpu.Seconds(), 1e-9))
	return nil
}

func (c nexmarkDataConfig) check(extra int) (nexmark.Format, string, error) {
	switch {
	case extra > 0:
		return 0, "", errors.New("unexpected arguments")
	case c.dir == "":
		return 0, "", errors.New("-dir is required")
	case c.events < 1 || c.first < 0:
		return 0, "", errors.New("-events must be at least 1 and -first not negative")
	}
	switch c.format {
	case "copy":
		return nexmark.COPY, ".txt", nil
	case "csv":
		return nexmark.CSV, ".csv", nil
	}
	return 0, "", fmt.Errorf("-format: %q is neither copy nor csv", c.format)
}

// writeNexmark writes the events to one file per table, in event order.
func writeNexmark(ctx context.Context, g *nexmark.Generator, c nexmarkDataConfig, f nexmark.Format, ext string) (counts [3]int64, err error) {
	var files [3]*os.File
	var ws [3]*bufio.Writer
	defer func() {
		for _, fl := range files {
			if fl != nil {
				err = errors.Join(err, fl.Close())
			}
		}
	}()
	for k, name := range nexmark.Tables {
		if files[k], err = os.Create(filepath.Join(c.dir, name+ext)); err != nil {
			return counts, err
		}
		ws[k] = bufio.NewWriterSize(files[k], 1<<20)
	}
	var row []byte
	for n := c.first; n < c.first+c.events; n++ {
		if n%65536 == 0 && ctx.Err() != nil {
			return counts, ctx.Err()
		}
		e := g.Event(n)
		row = nexmark.AppendRow(row[:0], &e, f)
		if _, err := ws[e.Kind].Write(row); err != nil {
			return counts, err
		}
		counts[e.Kind]++
	}
	for _, w := range ws {
		if err := w.Flush(); err != nil {
			return counts, err
		}
	}
	return counts, nil
}
