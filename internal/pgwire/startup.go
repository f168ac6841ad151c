package pgwire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// startupTimeout bounds the handshake, so a client that connects and says
// nothing does not hold a goroutine forever.
const startupTimeout = 30 * time.Second

// startup runs the handshake up to authentication: SSL and GSS encryption
// requests are declined, a cancel request is served (and the connection
// closed: p is nil), and a startup message is authenticated. On success the
// connection is registered for cancel requests.
func (c *conn) startup(ctx context.Context) (*StartupParams, error) {
	_ = c.nc.SetReadDeadline(time.Now().Add(startupTimeout))
	for {
		if ctx.Err() != nil {
			return nil, nil
		}
		msg, err := c.be.ReceiveStartupMessage()
		if err != nil {
			if isDisconnect(err) || ctx.Err() != nil {
				return nil, nil
			}
			return nil, c.fatal(ctx, sqlerr.Errorf(codeProtocolViolation, "invalid startup packet: %v", err))
		}
		switch m := msg.(type) {
		case *pgproto3.SSLRequest:
			if err := c.startTLS(); err != nil {
				return nil, err
			}
		case *pgproto3.GSSEncRequest:
			// 'N': not supported; the client goes on in plain text on
			// this connection, as libpq does with gssencmode=prefer.
			if _, err := c.nc.Write([]byte{'N'}); err != nil {
				return nil, fmt.Errorf("pgwire: declining encryption: %w", err)
			}
		case *pgproto3.CancelRequest:
			c.srv.cancel(m.ProcessID, m.SecretKey)
			return nil, nil
		case *pgproto3.StartupMessage:
			return c.authenticate(ctx, m)
		default:
			return nil, c.fatal(ctx, sqlerr.Errorf(codeProtocolViolation, "unexpected startup message %T", msg))
		}
	}
}

// authenticate checks the startup message, negotiates the protocol
// version, runs SCRAM when passwords are configured and sends
// AuthenticationOk.
func (c *conn) authenticate(ctx context.Context, m *pgproto3.StartupMessage) (*StartupParams, error) {
	p, unknownOpts := startupParams(m.Parameters)
	if p.User == "" {
		return nil, c.fatal(ctx, sqlerr.New(codeInvalidAuthorization, "no PostgreSQL user name specified in startup packet"))
	}
	if m.ProtocolVersion != pgproto3.ProtocolVersion30 || len(unknownOpts) > 0 {
		// Sluice speaks 3.0 and knows no protocol options; the client
		// falls back, as Postgres clients do with older servers.
		c.be.Send(&pgproto3.NegotiateProtocolVersion{
			NewestMinorProtocol: 0, UnrecognizedOptions: unknownOpts,
		})
	}
	if c.srv.auth != nil {
		ip := clientIP(c.raw.RemoteAddr())
		if err := c.srv.logins.check(ip); err != nil {
			return nil, c.fatal(ctx, err)
		}
		if err := c.authSCRAM(ctx, p.User); err != nil {
			if errors.Is(err, errClientLeft) {
				return nil, nil
			}
			if se, ok := sqlerr.As(err); ok && se.Code == codeInvalidPassword {
				c.srv.logins.failed(ip)
				select { // auth_delay: each guess costs time
				case <-time.After(loginFailDelay):
				case <-ctx.Done():
				}
			}
			return nil, c.fatal(ctx, err)
		}
		c.srv.logins.succeeded(ip)
	}
	c.be.Send(&pgproto3.AuthenticationOk{})
	// The handshake is over: from now on only shutdown ends a read.
	_ = c.nc.SetReadDeadline(time.Time{})
	if ctx.Err() != nil {
		return nil, nil
	}
	h, err := c.srv.register(p.User, c.raw)
	if err != nil {
		return nil, c.fatal(ctx, err)
	}
	c.handle = h
	p.ProcessID = h.pid
	p.RemoteAddr = c.raw.RemoteAddr()
	return p, nil
}

// startTLS answers an SSLRequest: 'S' and a TLS handshake when the server
// has a certificate (Config.TLS), else 'N', and the client goes on in
// plain text or gives up (sslmode=require). Either way the startup
// message follows.
func (c *conn) startTLS() error {
	if c.srv.cfg.TLS == nil || c.tlsDone {
		if _, err := c.nc.Write([]byte{'N'}); err != nil {
			return fmt.Errorf("pgwire: declining TLS: %w", err)
		}
		return nil
	}
	if _, err := c.nc.Write([]byte{'S'}); err != nil {
		return fmt.Errorf("pgwire: accepting TLS: %w", err)
	}
	tc := tls.Server(c.nc, c.srv.cfg.TLS)
	if err := tc.Handshake(); err != nil { // under the startup deadline
		return fmt.Errorf("pgwire: TLS handshake: %w", err)
	}
	c.useConn(tc)
	c.tlsDone = true
	return nil
}

// startupParams splits a startup message's parameters into the named
// fields, the settings and the protocol options (_pq_.*) it cannot honour.
func startupParams(raw map[string]string) (*StartupParams, []string) {
	p := &StartupParams{Settings: make(map[string]string)}
	var unknownOpts []string
	for k, v := range raw {
		switch k {
		case "user":
			p.User = v
		case "database":
			p.Database = v
		case "application_name":
			p.ApplicationName = v
		case "options":
			parseOptions(v, p.Settings)
		case "replication":
			// Replication connections are not supported; treat as normal.
		default:
			if strings.HasPrefix(k, "_pq_.") {
				unknownOpts = append(unknownOpts, k)
				continue
			}
			p.Settings[strings.ToLower(k)] = v
		}
	}
	if p.Database == "" {
		p.Database = p.User
	}
	sort.Strings(unknownOpts)
	return p, unknownOpts
}

// parseOptions reads the command-line style "options" startup parameter:
// "-c name=value" and "--name=value" pairs separated by spaces (a
// backslash escapes a space).
func parseOptions(s string, into map[string]string) {
	args := splitOptions(s)
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-c" && i+1 < len(args):
			i++
			a = args[i]
		case strings.HasPrefix(a, "-c"):
			a = a[2:]
		case strings.HasPrefix(a, "--"):
			a = a[2:]
		default:
			continue
		}
		if k, v, ok := strings.Cut(a, "="); ok {
			into[strings.ToLower(strings.ReplaceAll(k, "-", "_"))] = v
		}
	}
}

func splitOptions(s string) []string {
	var args []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '\\' && i+1 < len(s):
			i++
			cur.WriteByte(s[i])
		case ch == ' ' || ch == '\t':
			if cur.Len() > 0 {
				args = append(args, cur.String())
				cur.Reset()
			}
		default:
			cur.WriteByte(ch)
		}
	}
	if cur.Len() > 0 {
		args = append(args, cur.String())
	}
	return args
}

// sendWelcome sends what a client learns after authentication: the
// reported settings, the cancel key and the first ReadyForQuery.
func (c *conn) sendWelcome(p *StartupParams) error {
	for _, kv := range c.reportedSettings(p) {
		c.be.Send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
	}
	secret := make([]byte, len(c.handle.secret))
	copy(secret, c.handle.secret[:])
	c.be.Send(&pgproto3.BackendKeyData{ProcessID: c.handle.pid, SecretKey: secret})
	return c.readyForQuery()
}

// reportedSettings are the GUC_REPORT settings Postgres 15 sends at
// startup. Sluice formats dates as ISO, in UTC, with integer timestamps and
// UTF-8 text whatever the client asked for, so it reports exactly that and
// libpq and drivers parse accordingly.
func (c *conn) reportedSettings(p *StartupParams) [][2]string {
	superuser := "on"
	return [][2]string{
		{"application_name", p.ApplicationName},
		{"client_encoding", "UTF8"},
		{"DateStyle", "ISO, MDY"},
		{"default_transaction_read_only", "off"},
		{"in_hot_standby", "off"},
		{"integer_datetimes", "on"},
		{"IntervalStyle", "postgres"},
		{"is_superuser", superuser},
		{"server_encoding", "UTF8"},
		{"server_version", c.srv.cfg.ServerVersion},
		{"session_authorization", p.User},
		{"standard_conforming_strings", "on"},
		{"TimeZone", "UTC"},
	}
}
