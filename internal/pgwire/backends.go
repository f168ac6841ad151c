package pgwire

import (
	"errors"
	"net"
	"sync/atomic"
	"time"
)

// Backend control: pg_cancel_backend and pg_terminate_backend act on a
// connection by its process id, from another session, through the same
// paths as a cancel request and a shutdown.

// errTerminated cancels the statement of a connection being terminated.
var errTerminated = errors.New("pgwire: terminated by pg_terminate_backend")

// CancelBackend cancels the running statement of the connection with
// process id pid, as a cancel request does; it reports whether there is
// such a connection.
func (s *Server) CancelBackend(pid uint32) bool {
	h := s.handleOf(pid)
	if h == nil {
		return false
	}
	h.cancelCall(errCancelRequest)
	return true
}

// TerminateBackend ends the connection with process id pid: its statement
// is cancelled and the client told FATAL 57P01, whether it was running
// something or waiting for its next message. It reports whether there is
// such a connection.
func (s *Server) TerminateBackend(pid uint32) bool {
	h := s.handleOf(pid)
	if h == nil {
		return false
	}
	h.terminated.Store(true) // before the deadline: see conn.loop
	h.cancelCall(errTerminated)
	_ = h.nc.SetReadDeadline(time.Now())
	return true
}

func (s *Server) handleOf(pid uint32) *connHandle {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mu.conns[pid]
}

// backendState is what connHandle adds for backend control: the socket
// (to interrupt a read) and whether the connection is being terminated.
type backendState struct {
	nc         net.Conn
	terminated atomic.Bool
}
