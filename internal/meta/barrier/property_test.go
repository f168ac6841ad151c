package barrier

import (
	"errors"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyRandomEvents drives the machine with random event sequences,
// performing its actions like a real performer would (with random commit
// failures), and checks after every step that:
//   - no epoch is committed twice and commits go in increasing order;
//   - an epoch commits only once every expected actor that was not dropped
//     has collected it;
//   - injected epochs always increase and are never reused, even across
//     recoveries, and never expect a dropped actor;
//   - an event that returns an error changes nothing;
//   - the internal invariants hold, and nothing panics.
//
// At the end it drives the machine to quiescence and checks that every
// epoch handed out by RequestBarrier/AddJob was either committed or aborted.
func TestPropertyRandomEvents(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := newSim(rt)
		steps := rapid.IntRange(1, 150).Draw(rt, "steps")
		for range steps {
			s.step()
		}
		s.quiesce()
	})
}

type simEpoch struct {
	expected   actorSet
	collected  actorSet
	checkpoint bool
}

// sim is a performer plus an oracle: it keeps its own record of what the
// machine told it, independent of the machine's internals.
type sim struct {
	t    *rapid.T
	m    *Machine
	base time.Time
	now  time.Time
	cfg  Config

	recovering   bool
	live         map[JobID]JobSpec // jobs the sim believes exist (started or adding)
	adding       map[JobID]uint64  // job → its Add epoch, until injected
	droppedInRec map[JobID]JobSpec // dropped during the current recovery
	dropped      actorSet          // every actor ever dropped
	nextJob      JobID
	nextActor    ActorID

	epochs        map[uint64]*simEpoch // injected, not yet committed or aborted
	lastInjected  uint64
	lastCommitted uint64 // last epoch whose Commit was emitted
	durable       uint64 // last checkpoint with CommitDone
	outstanding   uint64 // epoch of the Commit awaiting an answer, or 0
	committed     map[uint64]bool
	aborted       map[uint64]bool
	handedOut     []uint64 // epochs returned by RequestBarrier/AddJob/StopJobs

	stopReq   map[JobID]bool   // jobs whose StopJobs succeeded, until dropped or recovery
	stopAt    map[JobID]uint64 // stopping jobs → epoch of their injected Stop
	resetJobs map[JobID]bool   // jobs that left through ResetActors: no DeleteState
}

func newSim(t *rapid.T) *sim {
	cfg := Config{
		Interval:        time.Duration(rapid.IntRange(1, 5).Draw(t, "interval")) * 10 * time.Millisecond,
		MaxInFlight:     rapid.IntRange(1, 4).Draw(t, "maxInFlight"),
		CheckpointEvery: rapid.IntRange(1, 3).Draw(t, "checkpointEvery"),
	}
	start := rapid.Uint64Range(0, 5).Draw(t, "committed")
	s := &sim{
		t: t, cfg: cfg, base: time.Unix(1000, 0),
		live: map[JobID]JobSpec{}, adding: map[JobID]uint64{}, dropped: newActorSet(),
		epochs: map[uint64]*simEpoch{}, committed: map[uint64]bool{}, aborted: map[uint64]bool{},
		stopReq: map[JobID]bool{}, stopAt: map[JobID]uint64{}, resetJobs: map[JobID]bool{},
		lastInjected: start, lastCommitted: start, durable: start, nextJob: 1, nextActor: 1,
	}
	s.now = s.base
	s.m = New(cfg, start)
	for range rapid.IntRange(0, 3).Draw(t, "initialJobs") {
		s.newJob()
	}
	s.process()
	return s
}

// newJob invents a job with fresh ids and records it as live.
func (s *sim) newJob() JobSpec {
	j := JobSpec{ID: s.nextJob}
	s.nextJob++
	n := rapid.IntRange(1, 3).Draw(s.t, "actors")
	for i := range n {
		a := s.nextActor
		s.nextActor++
		j.Actors = append(j.Actors, a)
		if i == 0 || rapid.Bool().Draw(s.t, "source") {
			j.Sources = append(j.Sources, a)
		}
	}
	s.live[j.ID] = j
	return j
}

func (s *sim) step() {
	ops := []func(){s.opTick, s.opRequest, s.opAddJob, s.opCollect, s.opCollect, s.opCollect,
		s.opCommitAnswer, s.opFail, s.opDrop, s.opRecovered, s.opBadEvent, s.opStop}
	ops[rapid.IntRange(0, len(ops)-1).Draw(s.t, "op")]()
	s.process()
}

// do runs one event; if it fails, the machine must be exactly as before.
func (s *sim) do(name string, event func() error) error {
	before := s.m.describe(s.base)
	err := event()
	if err != nil {
		if after := s.m.describe(s.base); after != before {
			s.t.Fatalf("%s failed (%v) but changed state:\nbefore:\n%s\nafter:\n%s", name, err, before, after)
		}
	}
	if ierr := s.m.checkInvariants(); ierr != nil {
		s.t.Fatalf("after %s: %v\n%s", name, ierr, s.m.describe(s.base))
	}
	return err
}

func (s *sim) opTick() {
	s.now = s.now.Add(time.Duration(rapid.IntRange(0, 2).Draw(s.t, "ticks")) * s.cfg.Interval)
	_ = s.do("tick", func() error { s.m.Tick(s.now); return nil })
}

func (s *sim) opRequest() {
	var e uint64
	err := s.do("request", func() (err error) { e, err = s.m.RequestBarrier(s.now, "flush"); return err })
	s.expectRecovering("request", err)
	if err == nil {
		s.handOut(e)
	}
}

func (s *sim) opAddJob() {
	id, next := s.nextJob, s.nextActor
	j := s.newJob()
	var e uint64
	err := s.do("add-job", func() (err error) { e, err = s.m.AddJob(s.now, j); return err })
	s.expectRecovering("add-job", err)
	if err != nil {
		delete(s.live, id)
		s.nextActor = next
		return
	}
	s.adding[id] = e
	s.handOut(e)
}

func (s *sim) handOut(e uint64) {
	if e <= s.lastInjected || slices.Contains(s.handedOut, e) && e != s.handedOut[len(s.handedOut)-1] {
		s.t.Fatalf("handed out epoch %d: last injected %d, earlier %v", e, s.lastInjected, s.handedOut)
	}
	s.handedOut = append(s.handedOut, e)
}

// expectRecovering: requests fail exactly when the machine is recovering.
func (s *sim) expectRecovering(name string, err error) {
	if got := errors.Is(err, ErrRecovering); got != s.m.Status(s.now).Recovering || (err != nil && !got) {
		s.t.Fatalf("%s: err %v while recovering=%t", name, err, s.m.Status(s.now).Recovering)
	}
}

// opCollect makes a random actor collect its next epoch: the oldest
// in-flight epoch that expects it and that it has not collected.
func (s *sim) opCollect() {
	actors := s.liveActors()
	if len(actors) == 0 {
		return
	}
	a := rapid.SampledFrom(actors).Draw(s.t, "actor")
	for _, e := range s.inflight() {
		ep := s.epochs[e]
		if ep.expected.has(a) && !ep.collected.has(a) {
			s.collect(a, e)
			return
		}
	}
}

func (s *sim) collect(a ActorID, e uint64) {
	err := s.do("collect", func() error { return s.m.Collected(a, e) })
	if err != nil {
		s.t.Fatalf("actor %d collecting its next epoch %d: %v", a, e, err)
	}
	s.epochs[e].collected[a] = struct{}{}
}

func (s *sim) opCommitAnswer() {
	if s.outstanding == 0 {
		return
	}
	e := s.outstanding
	if rapid.IntRange(0, 9).Draw(s.t, "commitFails") == 0 {
		_ = s.mustDo("commit-failed", func() error { return s.m.CommitFailed(e, errors.New("disk")) })
		s.outstanding = 0
		return
	}
	s.now = s.now.Add(time.Millisecond)
	_ = s.mustDo("commit-done", func() error { return s.m.CommitDone(s.now, e) })
	s.commitDone(e)
}

func (s *sim) commitDone(e uint64) {
	s.outstanding = 0
	if s.epochs[e].checkpoint {
		s.durable = e
	}
	s.committed[e] = true
	delete(s.epochs, e)
}

func (s *sim) mustDo(name string, event func() error) error {
	if err := s.do(name, event); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return nil
}

func (s *sim) opFail() {
	actors := s.liveActors()
	if len(actors) == 0 || rapid.IntRange(0, 3).Draw(s.t, "failRarely") != 0 {
		return
	}
	a := rapid.SampledFrom(actors).Draw(s.t, "failActor")
	_ = s.do("fail", func() error { return s.m.ActorFailed(a, errors.New("boom")) })
}

// opDrop drops a random job, sometimes only part of it, sometimes listing
// an actor nobody knows.
func (s *sim) opDrop() {
	ids := s.liveJobs()
	if len(ids) == 0 {
		return
	}
	j := s.live[rapid.SampledFrom(ids).Draw(s.t, "dropJob")]
	actors := j.Actors
	if len(actors) > 1 && rapid.Bool().Draw(s.t, "partial") {
		actors = actors[:1]
	}
	if rapid.Bool().Draw(s.t, "withUnknown") {
		actors = append(slices.Clone(actors), 100000+s.nextActor)
	}
	reset := rapid.IntRange(0, 3).Draw(s.t, "reset") == 0
	if reset {
		_ = s.mustDo("reset", func() error { return s.m.ResetActors(j.ID, actors) })
	} else {
		_ = s.mustDo("drop", func() error { return s.m.DropActors(j.ID, actors) })
	}
	for _, a := range actors {
		s.dropped[a] = struct{}{}
	}
	rest := without(j, newActorSet(actors...))
	if len(rest.Actors) > 0 {
		s.live[j.ID] = rest
		return
	}
	delete(s.live, j.ID)
	delete(s.stopReq, j.ID)
	delete(s.stopAt, j.ID)
	if reset {
		s.resetJobs[j.ID] = true
	}
	if s.recovering {
		s.droppedInRec[j.ID] = j
	}
}

// opRecovered reports the rebuilt graph, sometimes still listing a job that
// was dropped during the recovery (a topology read before the drop).
func (s *sim) opRecovered() {
	if !s.recovering {
		return
	}
	var jobs []JobSpec
	for _, id := range s.liveJobs() {
		jobs = append(jobs, s.live[id])
	}
	for _, j := range s.droppedInRec {
		if rapid.Bool().Draw(s.t, "stale") {
			jobs = append(jobs, j)
		}
	}
	_ = s.mustDo("recovered", func() error { return s.m.RecoveryDone(s.now, jobs) })
	s.recovering = false
}

// opBadEvent sends an event the machine must refuse without changing.
func (s *sim) opBadEvent() {
	switch rapid.IntRange(0, 3).Draw(s.t, "bad") {
	case 0:
		_ = s.do("bad collect", func() error { return s.m.Collected(99999, s.lastInjected) })
	case 1:
		_ = s.do("bad commit", func() error { return s.m.CommitDone(s.now, s.outstanding+1000) })
	case 2:
		for _, e := range s.inflight() {
			for a := range s.epochs[e].collected {
				if err := s.do("dup collect", func() error { return s.m.Collected(a, e) }); err == nil {
					s.t.Fatalf("duplicate collect of %d by %d accepted", e, a)
				}
				return
			}
		}
	case 3:
		_ = s.do("bad recovered", func() error {
			return s.m.RecoveryDone(s.now, []JobSpec{{ID: 1, Actors: []ActorID{7, 7}}})
		})
	}
}

// process performs and checks every action the machine produced.
func (s *sim) process() {
	for _, a := range s.m.Ready() {
		switch a := a.(type) {
		case Inject:
			s.onInject(a)
		case Commit:
			s.onCommit(a)
		case StartRecovery:
			if a.FromEpoch != s.durable {
				s.t.Fatalf("recovery from %d, last durable commit %d", a.FromEpoch, s.durable)
			}
			s.recovering = true
			s.droppedInRec = map[JobID]JobSpec{}
			clear(s.stopReq)
			clear(s.stopAt)
			s.outstanding = 0
			for id := range s.adding {
				delete(s.live, id) // its Add barrier never came
				delete(s.adding, id)
			}
		case AbortEpochs:
			s.onAbort(a)
		case DeleteState:
			if s.resetJobs[a.Job] {
				s.t.Fatalf("delete-state for job %d, which was reset, not dropped", a.Job)
			}
		case DiscardActorWrites:
		default:
			s.t.Fatalf("unknown action %v", a)
		}
	}
}

func (s *sim) onInject(a Inject) {
	e := a.Epoch.Curr
	if e <= s.lastInjected || s.committed[e] || s.aborted[e] {
		s.t.Fatalf("injected epoch %d after %d (reused or backwards)", e, s.lastInjected)
	}
	s.lastInjected = e
	for _, x := range a.Expected {
		if s.dropped.has(x) {
			s.t.Fatalf("epoch %d expects dropped actor %d", e, x)
		}
	}
	if add, ok := a.Mutation.(Add); ok {
		delete(s.adding, add.Job.ID)
	}
	s.checkStops(a)
	s.epochs[e] = &simEpoch{expected: newActorSet(a.Expected...), collected: newActorSet(), checkpoint: a.Checkpoint}
}

func (s *sim) onCommit(a Commit) {
	e := a.Epoch.Curr
	ep, ok := s.epochs[e]
	switch {
	case !ok || s.committed[e]:
		s.t.Fatalf("commit of epoch %d that is not in flight (committed=%t)", e, s.committed[e])
	case e <= s.lastCommitted:
		s.t.Fatalf("commit of %d after %d", e, s.lastCommitted)
	case s.outstanding != 0:
		s.t.Fatalf("commit of %d while %d outstanding", e, s.outstanding)
	}
	for x := range ep.expected {
		if !ep.collected.has(x) && !s.dropped.has(x) {
			s.t.Fatalf("epoch %d committed before actor %d collected it", e, x)
		}
	}
	s.lastCommitted = e
	s.outstanding = e
}

func (s *sim) onAbort(a AbortEpochs) {
	if a.After < s.durable || (a.After != s.durable && a.After != s.outstanding) {
		s.t.Fatalf("abort after %d, durable %d, outstanding %d", a.After, s.durable, s.outstanding)
	}
	for e := range s.epochs {
		if e > a.After {
			s.aborted[e] = true
			delete(s.epochs, e)
		}
	}
	for _, e := range s.handedOut {
		if e > a.After && !s.committed[e] {
			s.aborted[e] = true
		}
	}
}

// quiesce finishes recovery, collects and commits everything, and checks
// that every handed-out epoch was resolved.
func (s *sim) quiesce() {
	for round := 0; ; round++ {
		if round > 1000 {
			s.t.Fatalf("no quiescence:\n%s", s.m.describe(s.base))
		}
		st := s.m.Status(s.now)
		if !st.Recovering && st.InFlight == 0 && st.Pending == 0 {
			break
		}
		s.opRecovered()
		if s.outstanding != 0 {
			e := s.outstanding
			_ = s.mustDo("commit-done", func() error { return s.m.CommitDone(s.now, e) })
			s.commitDone(e)
		}
		for _, e := range s.inflight() {
			for _, a := range s.epochs[e].expected.sorted() {
				if !s.epochs[e].collected.has(a) && !s.dropped.has(a) {
					s.collect(a, e)
				}
			}
		}
		s.now = s.now.Add(s.cfg.Interval)
		s.process()
	}
	for _, e := range s.handedOut {
		if !s.committed[e] && !s.aborted[e] {
			s.t.Fatalf("handed-out epoch %d neither committed nor aborted", e)
		}
	}
}

func (s *sim) inflight() []uint64 {
	out := make([]uint64, 0, len(s.epochs))
	for e := range s.epochs {
		out = append(out, e)
	}
	slices.Sort(out)
	return out
}

func (s *sim) liveJobs() []JobID {
	out := make([]JobID, 0, len(s.live))
	for id := range s.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

func (s *sim) liveActors() []ActorID {
	var out []ActorID
	for _, id := range s.liveJobs() {
		out = append(out, s.live[id].Actors...)
	}
	return out
}

// opStop stops a random job gracefully. It must be refused exactly when
// the machine is recovering, the job's Add barrier has not been injected
// yet, or its stop was already requested.
func (s *sim) opStop() {
	ids := s.liveJobs()
	if len(ids) == 0 {
		return
	}
	id := rapid.SampledFrom(ids).Draw(s.t, "stopJob")
	var e uint64
	err := s.do("stop", func() (err error) { e, err = s.m.StopJobs(s.now, []JobID{id}); return err })
	_, adding := s.adding[id]
	switch {
	case s.m.Status(s.now).Recovering:
		if !errors.Is(err, ErrRecovering) {
			s.t.Fatalf("stop while recovering: %v", err)
		}
	case adding:
		if !errors.Is(err, ErrUnknownJob) {
			s.t.Fatalf("stop of a job still being added: %v", err)
		}
	case s.stopReq[id]:
		if !errors.Is(err, ErrJobStopping) {
			s.t.Fatalf("second stop: %v", err)
		}
	case err != nil:
		s.t.Fatalf("stop of running job %d: %v", id, err)
	default:
		s.stopReq[id] = true
		s.handOut(e)
	}
}

// checkStops: a Stop barrier expects every actor of the jobs it stops;
// a barrier after it expects none of them and feeds none of their sources.
func (s *sim) checkStops(a Inject) {
	e := a.Epoch.Curr
	expected, sources := newActorSet(a.Expected...), newActorSet(a.Sources...)
	if stop, ok := a.Mutation.(Stop); ok {
		for _, j := range stop.Jobs {
			if !s.stopReq[j.ID] {
				s.t.Fatalf("epoch %d stops job %d, which nobody stopped", e, j.ID)
			}
			for _, x := range s.live[j.ID].Actors {
				if !expected.has(x) {
					s.t.Fatalf("stop epoch %d does not expect actor %d of job %d", e, x, j.ID)
				}
			}
			s.stopAt[j.ID] = e
		}
		return
	}
	for id, at := range s.stopAt {
		for _, x := range s.live[id].Actors {
			if expected.has(x) || sources.has(x) {
				s.t.Fatalf("epoch %d after job %d's stop (epoch %d) still involves actor %d", e, id, at, x)
			}
		}
	}
}
