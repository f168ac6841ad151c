// Package web serves Sluice's dashboard: one page, embedded with its
// stylesheet and script, and the JSON API the page polls.
//
// The flow, step by step:
//
//  1. cmd/sluice mounts New's handler at / on --dashboard-addr, next to
//     /metrics and /debug/pprof/ (loopback by default).
//  2. The page (assets/) loads once and then polls GET /api/overview about
//     every second: the barriers (latency, committed epoch and its age,
//     barriers in flight, the last committed epochs) and every streaming
//     job with its status, freshness, backfill progress and counters. The
//     page keeps its own history of these polls, from which it draws the
//     barrier latency chart and derives rates (rows per second, the share
//     of time an actor waited) as differences between two polls.
//  3. For the job the user selected it also polls GET /api/jobs/{id}: the
//     job's streaming graph (fragments, the upstream fragments of other
//     jobs it reads, the exchanges between them) with each fragment's
//     counters, and its joins' amplification and heavy keys.
//  4. Actions are POST /api/jobs/{id}/{pause,resume,rate-limit,cancel,drop}.
//     They call the engine methods the SQL statements call (ALTER … PAUSE,
//     SET RATE_LIMIT, CANCEL JOBS, DROP), which tell the actors through
//     their control inbox or tear the job down, so they answer while a
//     barrier is stuck. A POST must carry X-Sluice-Action or a JSON
//     content type, which a form on another site cannot send without a
//     preflight this server never grants (CSRF); with a password
//     configured it must also carry the password (X-Sluice-Password, or
//     HTTP basic auth for curl), compared in constant time. Reads stay
//     open.
//  5. Errors are JSON: {"error": {"code": SQLSTATE, "message", "hint"}},
//     with an HTTP status that fits the SQLSTATE.
//
// The handler starts no goroutine and holds no state between requests but
// its configuration; it reads the engine through the small interfaces
// Reader and Controller, which *engine.Engine implements and the tests
// fake.
package web
