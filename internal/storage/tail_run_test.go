package storage

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/sluice-db/sluice/internal/types"
)

// TestABigStatementsTailGoesToRuns: a record of many keyed rows leaves
// the tail's tree (and memory) for runs as it is applied, their files
// already unlinked;
// every row stays readable by key and by scan until a prune covers the
// record, which drops the run.
func TestABigStatementsTailGoesToRuns(t *testing.T) {
	defer func(n int) { tailSpillBytes = n }(tailSpillBytes)
	tailSpillBytes = 16 << 10
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	const n = 3000
	b := types.NewBuilder(desc.Types, n+1)
	for k := range int64(n) {
		b.Append(types.Insert, types.Row{k, "x", 10 * k})
	}
	seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, Rows: b.Take()})
	if err != nil {
		t.Fatal(err)
	}
	s.tails.mu.Lock()
	tl := s.tails.mu.tables[desc.ID]
	inTree, inOrder, runs := tl.tree.Len(), len(tl.order), len(tl.runs)
	s.tails.mu.Unlock()
	if most := tailSpillBytes / tailEntryOverhead; inTree > most || inOrder > most || runs < n/most {
		t.Fatalf("after a %d-row record: %d writes in the tree (%d in its prune order) and %d runs; want at most %d, and %d runs or more",
			n, inTree, inOrder, runs, most, n/most)
	}
	if names, err := s.fs.List(s.ingestDir); err != nil || len(names) != 0 {
		t.Fatalf("files left in the ingest directory: %v (%v)", names, err)
	}
	if got := s.TailLen(desc.ID); got != n {
		t.Fatalf("TailLen = %d, want %d", got, n)
	}
	for _, k := range []int64{0, 1, 1234, n - 1} {
		row, ok, err := s.LatestGet(ctx, desc, types.Row{k, "x"})
		if err != nil || !ok || row[2].(int64) != 10*k {
			t.Fatalf("LatestGet %d = %v, %v, %v", k, row, ok, err)
		}
	}
	if _, ok, err := s.LatestGet(ctx, desc, types.Row{int64(n), "x"}); err != nil || ok {
		t.Fatalf("LatestGet of a key no write made: found %v, err %v", ok, err)
	}
	sn, err := s.LatestSnapshot(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	it, err := sn.ScanRange(ctx, desc, nil, &Bound{Value: int64(100), Inclusive: true}, &Bound{Value: int64(400)})
	if err != nil {
		t.Fatal(err)
	}
	sum := int64(0)
	rows := drain(t, it)
	for _, r := range rows {
		sum += r[0].(int64)
	}
	if len(rows) != 300 || sum != (100+399)*150 {
		t.Fatalf("range [100, 400) over the run: %d rows, keys adding up to %d", len(rows), sum)
	}
	_ = sn.Close()
	s.PruneTail(desc.ID, seq)
	if got := s.TailLen(desc.ID); got != 0 {
		t.Fatalf("after a prune through the record, TailLen = %d", got)
	}
}

// TestATailRunBelowTheFloorIsHidden: recovery's replay can apply an older
// record after a newer one, so a run can hold a key's write at or below
// a prune's floor while a newer write of it, committed, is pruned from the
// tree. Reads must ignore the run's write and find the committed one.
func TestATailRunBelowTheFloorIsHidden(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	applyTailRow(t, s, desc, 9, types.Row{int64(1), "x", int64(90)})
	applyTailRow(t, s, desc, 5, types.Row{int64(2), "x", int64(50)}) // replayed after 9
	spillTailNow(s, desc)                                            // one run: key 2 at 5, key 1 at 9
	applyTailRow(t, s, desc, 7, types.Row{int64(2), "x", int64(70)})
	// The table's job commits records 5 and 7; the tail is pruned through 7.
	tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
	if err := tbl.Insert(types.Row{int64(2), "x", int64(70)}); err != nil {
		t.Fatal(err)
	}
	sealCommit(t, s, tbl, 1)
	s.PruneTail(desc.ID, 7)
	row, ok, err := s.LatestGet(ctx, desc, types.Row{int64(2), "x"})
	if err != nil || !ok || row[2].(int64) != 70 {
		t.Fatalf("LatestGet of key 2 after the prune: %v, %v, %v; want v = 70", row, ok, err)
	}
	var got []string
	for _, r := range scanLatest(t, s, desc, false) { // replayed records: no log to wait for
		got = append(got, fmt.Sprint(r))
	}
	slices.Sort(got)
	if want := []string{"[1 x 90]", "[2 x 70]"}; !slices.Equal(got, want) {
		t.Fatalf("scan after the prune: %s, want %s", got, want)
	}
}

// TestATailThatCannotSpillStaysInMemory: a run that cannot be written (no
// directory to write it in) leaves the tail's tree as it was.
func TestATailThatCannotSpillStaysInMemory(t *testing.T) {
	defer func(n int) { tailSpillBytes = n }(tailSpillBytes)
	tailSpillBytes = 1
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	s.ingestDir = s.fs.PathJoin("db", "missing", "dir")
	s.ingestDirMade.Store(true) // so that writing into it fails
	applyTailRow(t, s, desc, 3, types.Row{int64(1), "x", int64(30)})
	s.tails.mu.Lock()
	tl := s.tails.mu.tables[desc.ID]
	inTree, runs, spillAt := tl.tree.Len(), len(tl.runs), tl.spillAt
	s.tails.mu.Unlock()
	if inTree != 1 || runs != 0 || spillAt == 0 {
		t.Fatalf("after a failed spill: %d in the tree, %d runs, next spill at %d", inTree, runs, spillAt)
	}
	if row, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); err != nil || !ok || row[2].(int64) != 30 {
		t.Fatalf("LatestGet after a failed spill: %v, %v, %v", row, ok, err)
	}
	if !strings.Contains(fmt.Sprint(s.ingestDir), "missing") {
		t.Fatal("test setup")
	}
}

// TestATailScanPassesHiddenRunEntries: a prune that covers part of a
// run hides its first entries; a scan reads the overlay in batches and
// resumes after the last entry a batch returned, so hidden entries must
// not fill a batch (they did: the scan lost every tail row after them).
func TestATailScanPassesHiddenRunEntries(t *testing.T) {
	defer func(n int) { runScanBatch = n }(runScanBatch)
	runScanBatch = overlayBatch
	s := openMem(t, nil)
	desc := kvDesc(7)
	const n = 3 * overlayBatch
	b := types.NewBuilder(desc.Types, n+1)
	for i := range n {
		b.Append(types.Insert, types.Row{int64(1), fmt.Sprintf("1%03d", i), int64(i)})
	}
	covered := b.Take()
	if err := s.ApplyTail(desc, 1, covered, false); err != nil {
		t.Fatal(err)
	}
	// Sorts after every row above: the second key column descends.
	applyTailRow(t, s, desc, 2, types.Row{int64(1), "0", int64(-1)})
	spillTailNow(s, desc)
	tbl := mustOpenTable(t, s, desc, ActorID(1), allVNodeBits())
	for i := range n {
		if err := tbl.Insert(covered.Row(i)); err != nil {
			t.Fatal(err)
		}
	}
	sealCommit(t, s, tbl, 1)
	s.PruneTail(desc.ID, 1)
	if rows := scanLatest(t, s, desc, false); len(rows) != n+1 {
		t.Fatalf("scan after a prune of the run's first %d entries: %d rows, want %d", n, len(rows), n+1)
	}
}

// TestATailMissingARecordFailsItsReaders: a piece whose rows cannot be
// read back from its segment is in the log but not in the tail; until a
// commit covers it, reads of the table's latest state fail rather than
// miss its rows (a key check would accept a duplicate).
func TestATailMissingARecordFailsItsReaders(t *testing.T) {
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	name, err := s.WriteSegment(desc.ID, []byte("payload"))
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("disk gone")
	seq, err := s.WriteDML(ctx, desc.ID, DMLWrite{Segment: name, Tail: &desc,
		LoadRows: func() (*types.Chunk, error) { return nil, boom }})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); !errors.Is(err, boom) {
		t.Fatalf("LatestGet over the broken tail: %v, want %v", err, boom)
	}
	sn, err := s.LatestSnapshot(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := sn.Get(ctx, desc, types.Row{int64(1), "x"}); !errors.Is(err, boom) {
		t.Fatalf("snapshot Get over the broken tail: %v", err)
	}
	it, err := sn.ScanTable(ctx, desc)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := it.Next(); !errors.Is(err, boom) {
		t.Fatalf("scan over the broken tail: %v", err)
	}
	_ = it.Close()
	_ = sn.Close()
	// It holds no write, but the engine must still prune it.
	if !s.TailPending(desc.ID) {
		t.Fatal("a broken tail is not pending a prune")
	}
	s.PruneTail(desc.ID, seq)
	if s.TailPending(desc.ID) {
		t.Fatal("the tail is still pending after the prune")
	}
	if _, ok, err := s.LatestGet(ctx, desc, types.Row{int64(1), "x"}); err != nil || ok {
		t.Fatalf("LatestGet after the commit covered the record: %v %v", ok, err)
	}
}

// spillTailNow writes desc's tail tree to a run, whatever its size.
func spillTailNow(s *Store, desc TableDesc) {
	defer func(n int) { tailSpillBytes = n }(tailSpillBytes)
	s.tails.mu.Lock()
	defer s.tails.mu.Unlock()
	tailSpillBytes = 1
	s.spillTail(s.tails.mu.tables[desc.ID])
}

// TestATailScanReadsARunStartingAtTheBound: a batch that stops at key k
// in one run must still read a newer run whose first key is k, or it
// returns k's older write.
func TestATailScanReadsARunStartingAtTheBound(t *testing.T) {
	s := openMem(t, nil)
	run := func(seq uint64, keys ...string) *tailRun {
		r, err := s.writeTailRunOf(7, len(keys), func(add func(k []byte, e tailEntry) error) error {
			for _, k := range keys {
				if err := add([]byte(k), tailEntry{seq: seq, val: []byte(k + fmt.Sprint(seq))}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	l := tailLayers{tree: newTailTree(), runs: []*tailRun{run(1, "a", "c", "e"), run(2, "c")}}
	var got []string
	sp := overlaySpan{lo: ""}
	for {
		items, done, err := l.scan(nil, sp, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			got = append(got, string(it.e.val))
			sp = overlaySpan{lo: it.key, after: true}
		}
		if done {
			break
		}
	}
	if want := []string{"a1", "c2", "e1"}; !slices.Equal(got, want) {
		t.Fatalf("scan in batches of 2: %v, want %v", got, want)
	}
}

// TestABulkRecordsRunIsBuiltOutsideTheLocks: a record of tailRunFrom
// plain inserts or more is read back from its segment and written to a
// run before the log's and the tails' locks are taken (every writer and
// latest reader of every table waits on them), and the run takes its
// record's seq when it is installed: the newer record's writes win, and
// each run goes with the prune that covers its record.
func TestABulkRecordsRunIsBuiltOutsideTheLocks(t *testing.T) {
	defer func(n int) { tailRunFrom = n }(tailRunFrom)
	tailRunFrom = 100
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	record := func(lo, hi, v int64) TableDMLWrite {
		name, err := s.WriteSegment(desc.ID, []byte("payload"))
		if err != nil {
			t.Fatal(err)
		}
		load := func() (*types.Chunk, error) {
			type tryLocker interface {
				TryLock() bool
				Unlock()
			}
			for what, mu := range map[string]tryLocker{"tails": &s.tails.mu, "log": &s.dml.mu} {
				if !mu.TryLock() {
					t.Errorf("a record's rows were read back under the %s lock", what)
					return nil, errors.New("locked")
				}
				mu.Unlock()
			}
			b := types.NewBuilder(desc.Types, int(hi-lo)+1)
			for k := lo; k < hi; k++ {
				b.Append(types.Insert, types.Row{k, "x", v})
			}
			return b.Take(), nil
		}
		return TableDMLWrite{Table: desc.ID, DMLWrite: DMLWrite{Segment: name, Tail: &desc, LoadRows: load}}
	}
	seqs, err := s.WriteDMLBatch(ctx, []TableDMLWrite{record(0, 200, 1), record(100, 300, 2)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.tails.mu.Lock()
	runs := len(s.tails.mu.tables[desc.ID].runs)
	s.tails.mu.Unlock()
	if runs != 2 {
		t.Fatalf("%d runs after two bulk records, want 2", runs)
	}
	check := func(when string, want map[int64]int64) {
		t.Helper()
		for k, v := range want {
			row, ok, err := s.LatestGet(ctx, desc, types.Row{k, "x"})
			switch {
			case err != nil:
				t.Fatalf("%s: LatestGet %d: %v", when, k, err)
			case v == 0 && ok:
				t.Fatalf("%s: key %d in the tail: %v", when, k, row)
			case v != 0 && (!ok || row[2].(int64) != v):
				t.Fatalf("%s: key %d = %v (%v), want %d", when, k, row, ok, v)
			}
		}
	}
	check("before any prune", map[int64]int64{50: 1, 150: 2, 250: 2, 300: 0})
	s.PruneTail(desc.ID, seqs[0])
	check("after the first record's prune", map[int64]int64{50: 0, 150: 2, 250: 2})
	s.PruneTail(desc.ID, seqs[1])
	if s.TailPending(desc.ID) {
		t.Fatal("the tail still holds runs after a prune through both records")
	}
}

// TestCommittedBlockRunOutlivesTheBlock: a block's piece, staged as a
// run (OwnWrites.AddRun) and committed with it (DMLWrite.Run), enters the
// tail as a copy of that run, not decoded again; once the block is gone
// and collected, the copy still reads the shared file (the block's run,
// whose cleanup closes it, is kept alive by the copy).
func TestCommittedBlockRunOutlivesTheBlock(t *testing.T) {
	defer func(n int) { tailRunFrom = n }(tailRunFrom)
	tailRunFrom = 2
	ctx := context.Background()
	s := openMem(t, nil)
	desc := kvDesc(7)
	const n = 300
	write := func() {
		own, err := NewOwnWrites(desc)
		if err != nil {
			t.Fatal(err)
		}
		b := types.NewBuilder(desc.Types, n+1)
		for k := range int64(n) {
			b.Append(types.Insert, types.Row{k, "x", 10 * k})
		}
		keys, err := own.AddRun(s, b.Take())
		if err != nil || keys == nil {
			t.Fatalf("AddRun: %v, %v", keys, err)
		}
		noRows := func() (*types.Chunk, error) { return nil, errors.New("the piece was decoded again") }
		if _, err := s.WriteDML(ctx, desc.ID, DMLWrite{Payload: []byte{1}, Tail: &desc, LoadRows: noRows, Run: keys}); err != nil {
			t.Fatal(err)
		}
	}
	write()
	for range 3 {
		runtime.GC()
	}
	for _, k := range []int64{0, 7, n - 1} {
		row, ok, err := s.LatestGet(ctx, desc, types.Row{k, "x"})
		if err != nil || !ok || row[2].(int64) != 10*k {
			t.Fatalf("LatestGet %d = %v, %v, %v", k, row, ok, err)
		}
	}
	if rows := scanLatest(t, s, desc, true); len(rows) != n {
		t.Fatalf("scan: %d rows, want %d", len(rows), n)
	}
}

// scanLatest returns every row of desc in s's latest state (durable: as
// of the log's synced records).
func scanLatest(t *testing.T, s *Store, desc TableDesc, durable bool) []types.Row {
	t.Helper()
	ctx := context.Background()
	sn, err := s.LatestSnapshot(ctx, durable)
	if err != nil {
		t.Fatal(err)
	}
	defer sn.Close()
	it, err := sn.ScanTable(ctx, desc)
	if err != nil {
		t.Fatal(err)
	}
	return drain(t, it)
}

// TestRunPointReadsShareAnIterator: point reads of a run (large enough
// for a two-level index), by several goroutines at once, in rising order
// (each seek starting where the shared iterator stands), falling order and
// at random, find each key the run holds with its value and none it does
// not.
func TestRunPointReadsShareAnIterator(t *testing.T) {
	s := openMem(t, nil)
	const n = 60000
	key := func(i int) []byte { return fmt.Appendf(nil, "k%07d", i) }
	r, err := s.writeTailRunOf(7, n/2, func(add func(k []byte, e tailEntry) error) error {
		for i := 0; i < n; i += 2 { // the even keys
			if err := add(key(i), tailEntry{seq: 3, val: fmt.Appendf(nil, "v%d", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !r.reader.Attributes.Has(sstable.AttributeTwoLevelIndex) {
		t.Fatal("the run has a one-level index: the test does not cover two-level seeks")
	}
	check := func(i int) error {
		e, ok, err := r.get(key(i))
		switch {
		case err != nil:
			return err
		case ok != (i%2 == 0):
			return fmt.Errorf("key %d: found %v", i, ok)
		case ok && (string(e.val) != fmt.Sprint("v", i) || e.seq != 3):
			return fmt.Errorf("key %d: %q at seq %d", i, e.val, e.seq)
		}
		return nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < n; i += 7 { // every seventh key: both kinds, every block
				k := i + g
				switch g {
				case 1:
					k = n - 1 - i
				case 2:
					k = rng.IntN(n)
				}
				k %= n
				if err := check(k); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
