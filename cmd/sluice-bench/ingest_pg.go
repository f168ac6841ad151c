package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/sluice-db/sluice/internal/sqllogic/pgtest"
)

// postgres is a private PostgreSQL cluster started by pgtest and then
// restarted with Postgres's durability defaults: pgtest turns fsync,
// synchronous_commit and full_page_writes off for speed, and a benchmark
// against Sluice's synced writes needs them on.
type postgres struct {
	*pgtest.Server
	dataDir  string
	pid      int    // the postmaster
	version  string // server_version
	settings string // the durability settings as the server reports them
}

func startPostgres(ctx context.Context) (*postgres, error) {
	srv, err := pgtest.Start(ctx)
	if err != nil {
		return nil, err
	}
	pg := &postgres{Server: srv}
	if err := pg.restartDurable(ctx); err != nil {
		srv.Stop()
		return nil, err
	}
	return pg, nil
}

func (pg *postgres) dsn() string { return pg.DSN("postgres") }

func (pg *postgres) restartDurable(ctx context.Context) error {
	var err error
	if pg.dataDir, err = pg.show(ctx, "data_directory"); err != nil {
		return err
	}
	pid, err := postmasterPID(pg.dataDir)
	if err != nil {
		return err
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return fmt.Errorf("postgres binary: %w", err)
	}
	// pgtest's directory holds the data directory, the socket and the log.
	dir := filepath.Dir(pg.dataDir)
	opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c TimeZone=UTC", pg.Port(), dir)
	cmd := exec.CommandContext(ctx, filepath.Join(filepath.Dir(exe), "pg_ctl"), "-D", pg.dataDir,
		"-l", filepath.Join(dir, "server.log"), "-w", "-t", "60", "-m", "fast", "-o", opts, "restart")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if os.Geteuid() == 0 {
		// Run as the cluster's owner, as pgtest does (pg_ctl refuses root).
		fi, err := os.Stat(pg.dataDir)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return errors.New("cannot read the data directory's owner")
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: st.Uid, Gid: st.Gid}}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pg_ctl restart: %w\n%s", err, out)
	}
	if pg.pid, err = postmasterPID(pg.dataDir); err != nil {
		return err
	}
	if pg.version, err = pg.show(ctx, "server_version"); err != nil {
		return err
	}
	var parts []string
	for _, name := range []string{"fsync", "synchronous_commit", "full_page_writes", "wal_level", "shared_buffers", "max_wal_size"} {
		v, err := pg.show(ctx, name)
		if err != nil {
			return err
		}
		if (name == "fsync" || name == "synchronous_commit" || name == "full_page_writes") && v != "on" {
			return fmt.Errorf("after the restart %s = %s, want on", name, v)
		}
		parts = append(parts, name+"="+v)
	}
	pg.settings = strings.Join(parts, ", ")
	return nil
}

func (pg *postgres) show(ctx context.Context, name string) (string, error) {
	conn, err := pgx.Connect(ctx, pg.dsn())
	if err != nil {
		return "", err
	}
	defer conn.Close(context.Background())
	var v string
	if err := conn.QueryRow(ctx, "SHOW "+name).Scan(&v); err != nil {
		return "", fmt.Errorf("SHOW %s: %w", name, err)
	}
	return v, nil
}

func postmasterPID(dataDir string) (int, error) {
	b, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid"))
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		return 0, fmt.Errorf("postmaster.pid: %w", err)
	}
	return pid, nil
}

// cpu is the CPU time of the postmaster and every process descended from
// it (backends, checkpointer, WAL writer, autovacuum), user plus system,
// including children already reaped (cutime, cstime), from /proc.
func (pg *postgres) cpu() (time.Duration, error) {
	return treeCPU(pg.pid)
}

type procStat struct {
	ppid  int
	ticks int64 // utime + stime + cutime + cstime
}

func treeCPU(root int) (time.Duration, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	procs := make(map[int]procStat, len(entries))
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readProcStat(pid); err == nil {
			procs[pid] = st
		}
	}
	if _, ok := procs[root]; !ok {
		return 0, fmt.Errorf("process %d is gone", root)
	}
	var ticks int64
	for pid, st := range procs {
		for p, depth := pid, 0; p > 1 && depth < 64; p, depth = procs[p].ppid, depth+1 {
			if p == root {
				ticks += st.ticks
				break
			}
		}
	}
	return time.Duration(ticks) * time.Second / time.Duration(clockTicks()), nil
}

// readProcStat parses /proc/<pid>/stat: the fields after the command
// name, which is in parentheses and may hold spaces.
func readProcStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseProcStat(string(b))
}

func parseProcStat(s string) (procStat, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return procStat{}, errors.New("no command name")
	}
	// From field 3 (state): ppid is field 4, utime..cstime fields 14–17.
	f := strings.Fields(s[i+1:])
	if len(f) < 15 {
		return procStat{}, errors.New("short stat line")
	}
	ppid, err := strconv.Atoi(f[1])
	if err != nil {
		return procStat{}, err
	}
	var st procStat
	st.ppid = ppid
	for _, x := range f[11:15] {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return procStat{}, err
		}
		st.ticks += v
	}
	return st, nil
}

var clockTicks = sync.OnceValue(func() int64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err == nil {
		if v, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64); err == nil && v > 0 {
			return v
		}
	}
	return 100 // USER_HZ on Linux
})

// peakRSS is process pid's peak resident set (VmHWM), or 0.
func peakRSS(pid int) uint64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}
