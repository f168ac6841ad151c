package pgwire

import (
	"context"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// SCRAM-SHA-256 (RFC 5802, RFC 7677) as Postgres runs it over
// AuthenticationSASL messages:
//
//  1. server: AuthenticationSASL [SCRAM-SHA-256]
//  2. client: SASLInitialResponse  "n,,n=,r=<client nonce>"
//  3. server: AuthenticationSASLContinue "r=<client+server nonce>,s=<salt>,i=<iterations>"
//  4. client: SASLResponse "c=biws,r=<nonce>,p=<proof>"
//  5. server verifies the proof against StoredKey and answers
//     AuthenticationSASLFinal "v=<server signature>", proving that it
//     knows the password too.
//
// The server keeps only salt, StoredKey and ServerKey per user, derived
// once in NewServer for Config.Users and kept in Postgres's rolpassword
// form (SCRAMSecret) for the users Config.Secrets knows. Channel binding
// (SCRAM-SHA-256-PLUS) is not offered. Passwords are not SASLprep-
// normalized, which only matters for non-ASCII passwords.

const (
	scramMechanism  = "SCRAM-SHA-256"
	scramIterations = 4096
)

var errClientLeft = errors.New("pgwire: client disconnected during authentication")

type scramVerifier struct {
	salt      []byte
	storedKey []byte
	serverKey []byte
}

type scramVerifiers struct {
	users map[string]scramVerifier
	// fakeSalt makes the exchange for an unknown user look like a real
	// one, so a client cannot probe which users exist.
	fakeSalt []byte
	// secrets looks up the users not in users (Config.Secrets).
	secrets func(user string) (string, bool)
}

func newSCRAMVerifiers(users map[string]string) (*scramVerifiers, error) {
	v := &scramVerifiers{users: make(map[string]scramVerifier, len(users)), fakeSalt: make([]byte, 16)}
	if _, err := rand.Read(v.fakeSalt); err != nil {
		return nil, fmt.Errorf("pgwire: salt: %w", err)
	}
	for user, password := range users {
		sv, err := newVerifier(password)
		if err != nil {
			return nil, err
		}
		v.users[user] = sv
	}
	return v, nil
}

// newVerifier derives password's verifier with a fresh salt.
func newVerifier(password string) (scramVerifier, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return scramVerifier{}, fmt.Errorf("pgwire: salt: %w", err)
	}
	salted, err := pbkdf2.Key(sha256.New, password, salt, scramIterations, sha256.Size)
	if err != nil {
		return scramVerifier{}, fmt.Errorf("pgwire: deriving SCRAM keys: %w", err)
	}
	stored := sha256.Sum256(hmacSHA256(salted, "Client Key"))
	return scramVerifier{salt: salt, storedKey: stored[:], serverKey: hmacSHA256(salted, "Server Key")}, nil
}

// SCRAMSecret returns password's SCRAM-SHA-256 verifier in Postgres's
// rolpassword form, "SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>"
// (base64): what a catalog keeps instead of the password.
func SCRAMSecret(password string) (string, error) {
	sv, err := newVerifier(password)
	if err != nil {
		return "", err
	}
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s$%d:%s$%s:%s", scramMechanism, scramIterations, b64(sv.salt), b64(sv.storedKey), b64(sv.serverKey)), nil
}

// parseSecret reads SCRAMSecret's form (at our iteration count).
func parseSecret(s string) (scramVerifier, bool) {
	var sv scramVerifier
	mech, rest, ok := strings.Cut(s, "$")
	iterSalt, keys, ok2 := strings.Cut(rest, "$")
	iter, salt, ok3 := strings.Cut(iterSalt, ":")
	stored, server, ok4 := strings.Cut(keys, ":")
	if !ok || !ok2 || !ok3 || !ok4 || mech != scramMechanism || iter != fmt.Sprint(scramIterations) {
		return sv, false
	}
	var err1, err2, err3 error
	sv.salt, err1 = base64.StdEncoding.DecodeString(salt)
	sv.storedKey, err2 = base64.StdEncoding.DecodeString(stored)
	sv.serverKey, err3 = base64.StdEncoding.DecodeString(server)
	return sv, err1 == nil && err2 == nil && err3 == nil && len(sv.storedKey) == sha256.Size && len(sv.serverKey) == sha256.Size
}

// lookup returns the verifier of user, or a fake one (ok false) that no
// proof matches.
func (v *scramVerifiers) lookup(user string) (scramVerifier, bool) {
	if sv, ok := v.users[user]; ok {
		return sv, true
	}
	if v.secrets != nil {
		if secret, ok := v.secrets(user); ok {
			if sv, ok := parseSecret(secret); ok {
				return sv, true
			}
		}
	}
	salt := hmacSHA256(v.fakeSalt, user)[:16]
	return scramVerifier{salt: salt, storedKey: make([]byte, sha256.Size), serverKey: make([]byte, sha256.Size)}, false
}

func hmacSHA256(key []byte, msg string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(msg))
	return h.Sum(nil)
}

// authSCRAM runs the exchange above. It returns a *sqlerr.Error (28P01)
// when the password is wrong, and errClientLeft when the client hangs up
// (libpq does that to prompt for a password, then reconnects).
func (c *conn) authSCRAM(ctx context.Context, user string) error {
	v, known := c.srv.auth.lookup(user)
	failed := sqlerr.Errorf(codeInvalidPassword, "password authentication failed for user \"%s\"", user)

	c.be.Send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	_ = c.be.SetAuthType(pgproto3.AuthTypeSASL)
	msg, err := c.receiveAuth()
	if err != nil {
		return err
	}
	first, ok := msg.(*pgproto3.SASLInitialResponse)
	if !ok || first.AuthMechanism != scramMechanism {
		return sqlerr.New(codeProtocolViolation, "client selected an invalid SASL authentication mechanism")
	}
	cf, err := parseClientFirst(string(first.Data))
	if err != nil {
		return err
	}
	nonce, err := serverNonce(cf.nonce)
	if err != nil {
		return err
	}
	serverFirst := fmt.Sprintf("r=%s,s=%s,i=%d", nonce, base64.StdEncoding.EncodeToString(v.salt), scramIterations)
	c.be.Send(&pgproto3.AuthenticationSASLContinue{Data: []byte(serverFirst)})
	_ = c.be.SetAuthType(pgproto3.AuthTypeSASLContinue)
	if msg, err = c.receiveAuth(); err != nil {
		return err
	}
	final, ok := msg.(*pgproto3.SASLResponse)
	if !ok {
		return sqlerr.New(codeProtocolViolation, "expected SASL response")
	}
	authMessage, proof, err := parseClientFinal(string(final.Data), cf, nonce, serverFirst)
	if err != nil {
		return err
	}
	if !known || !verifyProof(v, authMessage, proof) {
		return failed
	}
	sig := hmacSHA256(v.serverKey, authMessage)
	c.be.Send(&pgproto3.AuthenticationSASLFinal{Data: []byte("v=" + base64.StdEncoding.EncodeToString(sig))})
	_ = c.be.SetAuthType(pgproto3.AuthTypeOk)
	return nil
}

// receiveAuth flushes the pending authentication request and reads the
// client's answer.
func (c *conn) receiveAuth() (pgproto3.FrontendMessage, error) {
	if err := c.be.Flush(); err != nil {
		return nil, errClientLeft
	}
	msg, err := c.be.Receive()
	if err != nil {
		if isDisconnect(err) {
			return nil, errClientLeft
		}
		return nil, sqlerr.Errorf(codeProtocolViolation, "invalid authentication message: %v", err)
	}
	return msg, nil
}

type clientFirst struct {
	gs2Header string // "n,," or "y,,": echoed base64 in the final message
	bare      string // the message without the GS2 header
	nonce     string
}

func parseClientFirst(s string) (clientFirst, error) {
	bad := sqlerr.New(codeProtocolViolation, "malformed SCRAM message")
	var cf clientFirst
	switch {
	case strings.HasPrefix(s, "p="):
		return cf, sqlerr.New(codeProtocolViolation, "channel binding is not supported by this server")
	case !strings.HasPrefix(s, "n,") && !strings.HasPrefix(s, "y,"):
		return cf, bad
	}
	authzid, rest, ok := strings.Cut(s[2:], ",")
	if !ok {
		return cf, bad
	}
	if authzid != "" {
		return cf, sqlerr.New(codeFeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	cf.gs2Header = s[:3]
	cf.bare = rest
	attrs := strings.Split(rest, ",")
	if len(attrs) < 2 || !strings.HasPrefix(attrs[0], "n=") || !strings.HasPrefix(attrs[1], "r=") {
		return cf, bad
	}
	cf.nonce = attrs[1][2:]
	if cf.nonce == "" || strings.ContainsAny(cf.nonce, ",") {
		return cf, bad
	}
	return cf, nil
}

func serverNonce(clientNonce string) (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pgwire: nonce: %w", err)
	}
	return clientNonce + base64.StdEncoding.EncodeToString(b), nil
}

// parseClientFinal checks "c=<gs2 header>,r=<nonce>[,...],p=<proof>" and
// returns the AuthMessage the proof signs, and the proof.
func parseClientFinal(s string, cf clientFirst, nonce, serverFirst string) (string, []byte, error) {
	bad := sqlerr.New(codeProtocolViolation, "malformed SCRAM message")
	i := strings.LastIndex(s, ",p=")
	if i < 0 {
		return "", nil, bad
	}
	withoutProof := s[:i]
	proof, err := base64.StdEncoding.DecodeString(s[i+3:])
	if err != nil || len(proof) != sha256.Size {
		return "", nil, bad
	}
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 || attrs[0] != "c="+base64.StdEncoding.EncodeToString([]byte(cf.gs2Header)) {
		return "", nil, sqlerr.New(codeProtocolViolation, "SCRAM channel binding check failed")
	}
	if attrs[1] != "r="+nonce {
		return "", nil, sqlerr.New(codeProtocolViolation, "SCRAM nonce mismatch")
	}
	return cf.bare + "," + serverFirst + "," + withoutProof, proof, nil
}

// verifyProof recovers ClientKey = proof XOR HMAC(StoredKey, AuthMessage)
// and checks that its hash is StoredKey.
func verifyProof(v scramVerifier, authMessage string, proof []byte) bool {
	sig := hmacSHA256(v.storedKey, authMessage)
	clientKey := make([]byte, len(proof))
	for i := range proof {
		clientKey[i] = proof[i] ^ sig[i]
	}
	got := sha256.Sum256(clientKey)
	return subtle.ConstantTimeCompare(got[:], v.storedKey) == 1
}
