package sqllogic

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// EngineLabel is always among the labels, as the engine name is for
// sqllogictest-rs (`skipif postgres` / `onlyif postgres`).
const EngineLabel = "postgres"

// Options configures Run. The connection for a file comes from, in order:
// the DSN returned by BeforeFile, Connect, or DSN.
type Options struct {
	DSN     string
	Connect func(ctx context.Context) (*pgx.Conn, error)
	// BeforeFile runs before each file, e.g. to start a fresh server or
	// database; a non-empty dsn is used for that file's connections and
	// cleanup (if non-nil) runs after the file.
	BeforeFile func(ctx context.Context, path string) (dsn string, cleanup func(), err error)
	// Labels are matched by skipif/onlyif, besides EngineLabel.
	Labels []string
	// OnFile is called after each file, e.g. to print progress.
	OnFile func(FileResult)
	// FailFast stops after the first failed file.
	FailFast bool
	// NoSemantic disables the semantic fallback comparison.
	NoSemantic bool
	// RecordTimeout bounds each statement or query (0: no bound).
	RecordTimeout time.Duration
	// Trace, if set, gets one line per record run.
	Trace io.Writer
}

// Counts are record totals.
type Counts struct {
	Passed  int
	Failed  int
	Skipped int
	// Semantic counts passed records that matched only semantically; they
	// are included in Passed.
	Semantic int
}

func (c *Counts) add(o Counts) {
	c.Passed += o.Passed
	c.Failed += o.Failed
	c.Skipped += o.Skipped
	c.Semantic += o.Semantic
}

// Failure is one failed record.
type Failure struct {
	Loc      Location
	SQL      string
	Expected string
	Actual   string
}

func (f Failure) String() string {
	return fmt.Sprintf("%s\n  sql:      %s\n  expected: %s\n  actual:   %s",
		f.Loc, indent(f.SQL), indent(f.Expected), indent(f.Actual))
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n            ") }

// FileResult is the outcome of one file. Err is set when the file could
// not run at all (parse error, no connection); it then counts as failed.
type FileResult struct {
	Path     string
	Records  Counts
	Failures []Failure
	Err      error
	Duration time.Duration
}

// Passed reports whether the file ran and no record failed.
func (r FileResult) Passed() bool { return r.Err == nil && r.Records.Failed == 0 }

// FirstProblem describes why the file failed, or "" if it passed.
func (r FileResult) FirstProblem() string {
	switch {
	case r.Err != nil:
		return r.Err.Error()
	case len(r.Failures) > 0:
		return r.Failures[0].String()
	}
	return ""
}

// Summary is the outcome of a Run.
type Summary struct {
	Files       []FileResult
	FilesPassed int
	FilesFailed int
	Records     Counts
}

// Run runs every test file under paths (directories are walked for *.slt;
// *.slt.part files are only reached through include), each on fresh
// connections, and returns the tallies. The error is for problems that stop
// the whole run (missing paths, cancelled context); failing files are
// reported in the Summary.
func Run(ctx context.Context, opts Options, paths ...string) (Summary, error) {
	files, err := collectFiles(paths)
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		res := runFile(ctx, &opts, f)
		sum.Files = append(sum.Files, res)
		sum.Records.add(res.Records)
		if res.Passed() {
			sum.FilesPassed++
		} else {
			sum.FilesFailed++
		}
		if opts.OnFile != nil {
			opts.OnFile(res)
		}
		if opts.FailFast && !res.Passed() {
			break
		}
	}
	return sum, ctx.Err()
}

// collectFiles expands directories into their *.slt files, sorted.
func collectFiles(paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no test paths given")
	}
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("test path: %w", err)
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(path, ".slt") {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("walk %s: %w", p, err)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

// runFile parses and runs one file with its own sessions.
func runFile(ctx context.Context, opts *Options, path string) (res FileResult) {
	start := time.Now()
	res.Path = path
	defer func() { res.Duration = time.Since(start) }()
	recs, err := ParseFile(path)
	if err != nil {
		res.Err = err
		return res
	}
	dsn := opts.DSN
	connect := opts.Connect
	if opts.BeforeFile != nil {
		fileDSN, cleanup, err := opts.BeforeFile(ctx, path)
		if err != nil {
			res.Err = fmt.Errorf("before file: %w", err)
			return res
		}
		if cleanup != nil {
			defer cleanup()
		}
		if fileDSN != "" {
			dsn, connect = fileDSN, nil
		}
	}
	fr := newFileRun(opts, path, &sessions{dsn: dsn, connect: connect}, &res)
	defer fr.close()
	fr.run(ctx, recs)
	return res
}
