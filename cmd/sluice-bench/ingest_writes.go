package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// clientSide is one system's run of the INSERT figure.
type clientSide struct {
	stmts   int
	wall    time.Duration // first statement sent to the last one answered
	latency []time.Duration
	nextID  int64 // above every id the window inserted
	// flush is Sluice's FLUSH right after the window: the views catching
	// up with the inserts (INSERT returns before they include it).
	flush measured
}

type clientsResult struct {
	figure     figureResult
	sl, pg     clientSide // every window's sum
	pairRatios []float64  // each window pair's statements/s, Sluice over PostgreSQL
}

const (
	insertDDL   = "CREATE TABLE ins_bid (id bigint PRIMARY KEY, auction bigint, price bigint)"
	infoDDL     = "CREATE TABLE auction_info (auction bigint PRIMARY KEY, cat int)"
	insertSQL   = "INSERT INTO ins_bid (id, auction, price) VALUES ($1, $2, $3)"
	joinView    = "SELECT b.id, b.auction, b.price, a.cat FROM ins_bid b JOIN auction_info a ON b.auction = a.auction"
	aggView     = "SELECT auction, count(*) AS n, sum(price) AS total FROM ins_bid GROUP BY auction"
	clientsNote = "sluice: materialized join + aggregate views; postgres: the same as plain views (no work on INSERT)"
)

func (b *ingestBench) clientsFigure(ctx context.Context) (*clientsResult, error) {
	res := &clientsResult{figure: figureResult{key: "inserts", label: fmt.Sprintf("%d clients inserts", b.cfg.clients)}}
	conns := make(map[*side][]*pgx.Conn)
	defer func() {
		for _, cs := range conns {
			for _, c := range cs {
				_ = c.Close(context.Background())
			}
		}
	}()
	for _, s := range b.sides() {
		if err := b.setupInserts(ctx, s); err != nil {
			return nil, err
		}
		cs, err := openConns(ctx, s, b.cfg.clients)
		conns[s] = cs
		if err != nil {
			return nil, err
		}
	}
	if err := b.insertWindows(ctx, res, conns); err != nil {
		return nil, err
	}
	for _, s := range b.sides() {
		stmts := res.pg.stmts
		if s.sluice {
			stmts = res.sl.stmts
		}
		if err := b.checkInserts(ctx, s, stmts); err != nil {
			return nil, err
		}
	}
	res.figure.notes = append([]string{clientsNote}, res.figure.notes...)
	res.figure.notes = append(res.figure.notes,
		fmt.Sprintf("sluice's FLUSH after each window: %.2f s cpu, %.2f s wall in all (not in the row)", res.sl.flush.cpu.Seconds(), res.sl.flush.wall.Seconds()))
	return res, nil
}

// setupInserts creates the INSERT figure's tables and views on s.
func (b *ingestBench) setupInserts(ctx context.Context, s *side) error {
	kind := "VIEW"
	if s.sluice {
		kind = "MATERIALIZED VIEW"
	}
	for _, q := range []string{insertDDL, infoDDL} {
		if err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	if err := s.copyIn(ctx, "auction_info", b.data.auctionInfo, int(b.data.auctionSpan)); err != nil {
		return err
	}
	for _, q := range []string{"CREATE " + kind + " ins_join AS " + joinView, "CREATE " + kind + " ins_by_auction AS " + aggView} {
		if err := s.exec(ctx, q); err != nil {
			return err
		}
	}
	return nil
}

func openConns(ctx context.Context, s *side, n int) ([]*pgx.Conn, error) {
	conns := make([]*pgx.Conn, 0, n)
	for range n {
		c, err := s.connect(ctx)
		if err != nil {
			return conns, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// insertWindow measures -clients goroutines inserting one row per
// statement on s for d, ids from base on.
func (b *ingestBench) insertWindow(ctx context.Context, s *side, conns []*pgx.Conn, d time.Duration, base int64) (clientSide, measured, error) {
	if err := b.quiesce(ctx, "inserts"); err != nil {
		return clientSide{}, measured{}, err
	}
	b.progress("inserts: %s, %d clients for %s", s.name, b.cfg.clients, d)
	var cs clientSide
	m, err := s.measure(func() error {
		var err error
		cs, err = b.runInserts(ctx, conns, d, base)
		return err
	})
	if err != nil {
		return cs, m, fmt.Errorf("%s: %w", s.name, err)
	}
	m.wall = cs.wall
	if s.sluice {
		if cs.flush, err = s.measure(func() error { return s.exec(ctx, "FLUSH") }); err != nil {
			return cs, m, err
		}
	}
	return cs, m, nil
}

func (b *ingestBench) runInserts(ctx context.Context, conns []*pgx.Conn, d time.Duration, base int64) (clientSide, error) {
	lat := make([][]time.Duration, len(conns))
	errs := make([]error, len(conns))
	clients := int64(len(conns))
	start := time.Now()
	deadline := start.Add(d)
	var wg sync.WaitGroup
	for g, conn := range conns {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(b.cfg.seed, uint64(base)+uint64(g)+1))
			for i := int64(0); time.Now().Before(deadline); i++ {
				id := base + i*clients + int64(g)
				auction := b.data.auctionLo + rng.Int64N(b.data.auctionSpan)
				t0 := time.Now()
				_, err := conn.Exec(ctx, insertSQL, id, auction, int64(100+rng.IntN(10_000_000)))
				lat[g] = append(lat[g], time.Since(t0))
				if err != nil {
					errs[g] = fmt.Errorf("client %d, id %d: %w", g, id, err)
					return
				}
			}
		})
	}
	wg.Wait()
	cs := clientSide{wall: time.Since(start)}
	for g := range conns {
		cs.latency = append(cs.latency, lat[g]...)
		cs.nextID = max(cs.nextID, base+int64(len(lat[g]))*clients)
	}
	cs.stmts = len(cs.latency)
	if err := errors.Join(errs...); err != nil {
		return cs, err
	}
	if cs.stmts == 0 {
		return cs, errShortRun
	}
	return cs, nil
}

// checkInserts checks that every acknowledged row is in the table and,
// through the join, in the views.
func (b *ingestBench) checkInserts(ctx context.Context, s *side, stmts int) error {
	for _, q := range []string{"SELECT count(*) FROM ins_bid", "SELECT count(*) FROM ins_join", "SELECT sum(n)::bigint FROM ins_by_auction"} {
		n, err := s.count(ctx, q)
		if err != nil {
			return err
		}
		if n != int64(stmts) {
			return fmt.Errorf("%s: %s = %d, want %d", s.name, q, n, stmts)
		}
	}
	return nil
}

// updateAllFigure loads -rows keyed rows (not measured), then measures
// one UPDATE of every row: on Sluice with the FLUSH that writes it to the
// table's state, as the COPY figure's FLUSH is (Postgres's UPDATE writes
// its heap and WAL itself).
func (b *ingestBench) updateAllFigure(ctx context.Context) (figureResult, error) {
	r := figureResult{key: "update_all", label: "update all rows"}
	for _, s := range b.sides() {
		if err := s.exec(ctx, updateAllDDL); err != nil {
			return r, err
		}
		if err := s.copyIn(ctx, "upd_all", b.data.keyed, b.cfg.rows); err != nil {
			return r, err
		}
		if err := b.quiesce(ctx, r.label); err != nil {
			return r, err
		}
		const sumSQL = "SELECT sum(price)::bigint FROM upd_all"
		before, err := s.count(ctx, sumSQL)
		if err != nil {
			return r, err
		}
		b.progress("%s: %s", r.label, s.name)
		m, err := s.measure(func() error {
			if err := s.exec(ctx, "UPDATE upd_all SET price = price + 1"); err != nil || !s.sluice {
				return err
			}
			return s.exec(ctx, "FLUSH")
		})
		if err != nil {
			return r, fmt.Errorf("%s: %w", s.name, err)
		}
		if after, err := s.count(ctx, sumSQL); err != nil || after-before != int64(b.cfg.rows) {
			return r, fmt.Errorf("%s: the prices grew by %d, want %d (%v)", s.name, after-before, b.cfg.rows, err)
		}
		if s.sluice {
			r.sl = m
		} else {
			r.pg = m
		}
	}
	r.notes = []string{fmt.Sprintf("one UPDATE of all %d rows of a table with a bigint primary key; sluice's includes its FLUSH", b.cfg.rows)}
	return r, nil
}

const updateAllDDL = "CREATE TABLE upd_all (id bigint PRIMARY KEY, auction bigint, price bigint)"

type updateResult struct {
	figure figureResult
	sl, pg []time.Duration
}

const (
	updateDDL = "CREATE TABLE upd_bid (id bigint PRIMARY KEY, auction bigint, price bigint)"
	updateSQL = "UPDATE upd_bid SET price = price + 1 WHERE id = $1"
)

// updateFigure loads -rows keyed rows (not measured), then measures
// -updates sequential UPDATEs of random ids through one prepared
// statement.
func (b *ingestBench) updateFigure(ctx context.Context) (*updateResult, error) {
	res := &updateResult{figure: figureResult{key: "update_pk", label: "update by pk"}}
	for _, s := range b.sides() {
		if err := s.exec(ctx, updateDDL); err != nil {
			return nil, err
		}
		if err := s.copyIn(ctx, "upd_bid", b.data.keyed, b.cfg.rows); err != nil {
			return nil, err
		}
		lat, m, err := b.runUpdates(ctx, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		if s.sluice {
			res.figure.sl, res.sl = m, lat
		} else {
			res.figure.pg, res.pg = m, lat
		}
	}
	res.figure.notes = []string{fmt.Sprintf("%d sequential UPDATEs of random ids on %d rows, one prepared statement", b.cfg.updates, b.cfg.rows)}
	return res, nil
}

func (b *ingestBench) runUpdates(ctx context.Context, s *side) ([]time.Duration, measured, error) {
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, measured{}, err
	}
	defer func() { _ = conn.Close(context.Background()) }()
	if _, err := conn.Prepare(ctx, "upd", updateSQL); err != nil {
		return nil, measured{}, fmt.Errorf("prepare: %w", err)
	}
	if err := b.quiesce(ctx, "update by pk"); err != nil {
		return nil, measured{}, err
	}
	b.progress("update by pk: %s, %d updates", s.name, b.cfg.updates)
	rng := rand.New(rand.NewPCG(b.cfg.seed, 0xface))
	lat := make([]time.Duration, 0, b.cfg.updates)
	m, err := s.measure(func() error {
		for range b.cfg.updates {
			id := rng.Int64N(int64(b.cfg.rows))
			t0 := time.Now()
			tag, err := conn.Exec(ctx, "upd", id)
			lat = append(lat, time.Since(t0))
			if err != nil {
				return fmt.Errorf("id %d: %w", id, err)
			}
			if tag.RowsAffected() != 1 {
				return fmt.Errorf("id %d: updated %d rows, want 1", id, tag.RowsAffected())
			}
		}
		return nil
	})
	return lat, m, err
}
