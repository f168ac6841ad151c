package pgwire

import (
	"net"
	"sync"
	"time"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Failed logins are slowed and then refused per client address, so a
// password cannot be guessed at the speed of the network: every failure
// is answered after loginFailDelay (as Postgres's auth_delay does), and
// an address with loginMaxFailures failures in loginWindow is refused
// before authentication until the window has passed since its last
// failure. A successful login clears the address's count.
const (
	loginFailDelay   = 250 * time.Millisecond
	loginMaxFailures = 10
	loginWindow      = time.Minute
)

// loginLimiter counts recent failures by client IP.
type loginLimiter struct {
	mu       sync.Mutex
	failures map[string]*loginFailures
	now      func() time.Time
}

type loginFailures struct {
	n    int
	last time.Time
}

func clientIP(a net.Addr) string {
	if tcp, ok := a.(*net.TCPAddr); ok {
		return tcp.IP.String()
	}
	return a.String()
}

// check refuses an address locked out by its failures.
func (l *loginLimiter) check(ip string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.failures[ip]
	if f == nil || f.n < loginMaxFailures {
		return nil
	}
	wait := f.last.Add(loginWindow).Sub(l.now())
	if wait <= 0 {
		delete(l.failures, ip)
		return nil
	}
	return sqlerr.Errorf(codeInvalidAuthorization,
		"too many failed login attempts from %s; try again in %d s", ip, int(wait.Seconds())+1)
}

// failed counts a failed login.
func (l *loginLimiter) failed(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.failures == nil {
		l.failures = map[string]*loginFailures{}
	}
	if len(l.failures) > 10000 { // many addresses: drop those past their window
		for k, f := range l.failures {
			if now.Sub(f.last) > loginWindow {
				delete(l.failures, k)
			}
		}
	}
	f := l.failures[ip]
	if f == nil || now.Sub(f.last) > loginWindow {
		f = &loginFailures{}
		l.failures[ip] = f
	}
	f.n++
	f.last = now
}

// succeeded clears an address's failures.
func (l *loginLimiter) succeeded(ip string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.failures, ip)
}
