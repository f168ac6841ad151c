package stream

import "fmt"

// Control is a command on an actor's out-of-band control channel. It
// changes whether or how fast the actor runs, or where its output goes —
// never what it computes — so it takes effect at once, with no barrier.
// Commands are plain data so that in cluster mode they travel as RPC
// messages unchanged.
type Control interface {
	isControl()
	String() string
}

// ControlStop cancels the actor immediately (DROP, CANCEL). Its executors
// notice within one output chunk; channel sends notice at once.
type ControlStop struct{}

// ControlRateLimit limits the actor's sources to RowsPerSec rows per
// second; < 0 removes the limit, 0 pauses.
type ControlRateLimit struct{ RowsPerSec int64 }

// ControlPause pauses (Paused) or resumes the actor's sources.
type ControlPause struct{ Paused bool }

// ControlDetach removes every dispatcher of the actor whose outputs all go
// to the given downstream actors: graceful detach before those actors are
// dropped. A producer blocked sending to them is released at once.
type ControlDetach struct{ Downstream map[ActorID]bool }

func (ControlStop) isControl()      {}
func (ControlRateLimit) isControl() {}
func (ControlPause) isControl()     {}
func (ControlDetach) isControl()    {}

func (ControlStop) String() string        { return "stop" }
func (c ControlRateLimit) String() string { return fmt.Sprintf("rate_limit %d", c.RowsPerSec) }
func (c ControlPause) String() string     { return fmt.Sprintf("pause %v", c.Paused) }
func (c ControlDetach) String() string    { return fmt.Sprintf("detach %d", len(c.Downstream)) }

// HandleControl applies c. It never blocks on data: it takes the actor's
// small lock only to swap pointers, never while sending.
func (a *Actor) HandleControl(c Control) {
	switch c := c.(type) {
	case ControlStop:
		a.handleStop()
	case ControlRateLimit:
		a.Throttle.SetRateLimit(c.RowsPerSec)
	case ControlPause:
		a.Throttle.SetPaused(c.Paused)
	case ControlDetach:
		a.handleDetach(c.Downstream)
	}
}

func (a *Actor) handleStop() {
	a.mu.Lock()
	a.mu.stopped = true
	cancel := a.mu.cancel
	a.mu.Unlock()
	if cancel != nil {
		cancel(ErrStopped)
	}
}

// handleDetach drops dispatchers whose outputs all lead to removed actors
// and detaches those outputs, releasing a blocked send. A dispatcher that
// also feeds surviving actors keeps its outputs to them; its removed
// outputs are detached and so drop what is sent to them.
func (a *Actor) handleDetach(down map[ActorID]bool) {
	a.mu.Lock()
	kept := a.mu.dispatchers[:0:0]
	for _, d := range a.mu.dispatchers {
		all := true
		for _, o := range d.Outputs() {
			if down[o.Actor] {
				o.Detach()
			} else {
				all = false
			}
		}
		if !all {
			kept = append(kept, d)
		}
	}
	a.mu.dispatchers = kept
	a.mu.downstream.note(kept)
	a.mu.Unlock()
}
