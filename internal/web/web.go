package web

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/json"
	"errors"
	"io/fs"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Reader is what the dashboard reads: the barriers and jobs, and one
// job's graph. Neither waits for a barrier.
type Reader interface {
	Overview(ctx context.Context) (engine.Overview, error)
	JobDetail(id uint32) (engine.JobDetail, bool)
}

// Controller is what the dashboard's actions call: the methods the SQL
// control statements call, which never wait for a barrier.
type Controller interface {
	SetPaused(ctx context.Context, name string, paused bool) error
	SetRateLimit(ctx context.Context, name string, rowsPerSec *int64) error
	CancelJobs(ctx context.Context, ids []uint64) error
	Drop(ctx context.Context, name string, cascade bool) error
}

// Engine is both; *engine.Engine implements it.
type Engine interface {
	Reader
	Controller
}

// Config configures the dashboard.
type Config struct {
	Engine Engine
	// Password, when not empty, is required for actions (POST).
	Password string
}

//go:embed assets
var assets embed.FS

// actionTimeout bounds an action. The control path answers in
// milliseconds even during a stall; this only stops a wedged one from
// holding the request forever.
const actionTimeout = 30 * time.Second

// Handler serves the page at / and the API under /api/.
type Handler struct {
	cfg Config
	// password is the configured password's hash (hashing both sides
	// first makes the constant-time comparison independent of length).
	password [sha256.Size]byte
	mux      *http.ServeMux
}

// New returns the dashboard's handler.
func New(cfg Config) *Handler {
	h := &Handler{cfg: cfg, password: sha256.Sum256([]byte(cfg.Password)), mux: http.NewServeMux()}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded directory is part of the binary
	}
	h.mux.Handle("/", pageOnly(http.FileServerFS(static)))
	h.mux.HandleFunc("GET /api/overview", h.serveOverview)
	h.mux.HandleFunc("GET /api/jobs/{id}", h.serveJob)
	h.mux.HandleFunc("POST /api/jobs/{id}/{action}", h.serveAction)
	h.mux.HandleFunc("/api/", h.serveNoRoute)
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("X-Frame-Options", "DENY")
	// The page runs only its own script; its inline styles are bar widths.
	w.Header().Set("Content-Security-Policy",
		"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'")
	h.mux.ServeHTTP(w, r)
}

// pageOnly serves the assets to GET and HEAD only, and makes the browser
// revalidate them, so a page never runs an old script against a newer
// binary's API.
func pageOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}

// serveNoRoute answers an /api/ request no route takes: a path that does
// not exist, or a method the path does not allow.
func (h *Handler) serveNoRoute(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodPost {
		writeErrorStatus(w, http.StatusMethodNotAllowed,
			sqlerr.Errorf(sqlerr.FeatureNotSupported, "method %s is not allowed here: reads are GET, actions POST", r.Method))
		return
	}
	writeError(w, sqlerr.Errorf(sqlerr.UndefinedObject, "no API at %s %s", r.Method, r.URL.Path))
}

func (h *Handler) serveOverview(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	o, err := h.cfg.Engine.Overview(ctx)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, overviewJSON(o, h.cfg.Password != ""))
}

func (h *Handler) serveJob(w http.ResponseWriter, r *http.Request) {
	d, err := h.job(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, detailJSON(d))
}

// job finds the job the request's {id} names.
func (h *Handler) job(r *http.Request) (engine.JobDetail, error) {
	raw := r.PathValue("id")
	id, err := strconv.ParseUint(raw, 10, 32)
	if err != nil {
		return engine.JobDetail{}, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid job id %q", raw)
	}
	d, ok := h.cfg.Engine.JobDetail(uint32(id))
	if !ok {
		return engine.JobDetail{}, sqlerr.Errorf(sqlerr.UndefinedObject, "job %d does not exist", id)
	}
	return d, nil
}

// codeInvalidPassword is Postgres's invalid_password.
const codeInvalidPassword sqlerr.Code = "28P01"

// authorize checks an action's CSRF header and, when a password is
// configured, its password.
func (h *Handler) authorize(r *http.Request) error {
	if r.Header.Get("X-Sluice-Action") == "" && !isJSON(r.Header.Get("Content-Type")) {
		return sqlerr.New(sqlerr.InsufficientPrivilege,
			"actions need the header X-Sluice-Action: 1 or a JSON body (a guard against cross-site requests)")
	}
	if h.cfg.Password == "" {
		return nil
	}
	given := r.Header.Get("X-Sluice-Password")
	if _, p, ok := r.BasicAuth(); ok && given == "" {
		given = p
	}
	sum := sha256.Sum256([]byte(given))
	if given == "" || subtle.ConstantTimeCompare(sum[:], h.password[:]) != 1 {
		e := sqlerr.New(codeInvalidPassword, "the dashboard's password is required for actions")
		e.Hint = "Give the password of --dashboard-password (or $SLUICE_DASHBOARD_PASSWORD)."
		return e
	}
	return nil
}

func isJSON(contentType string) bool {
	t, _, err := mime.ParseMediaType(contentType)
	return err == nil && t == "application/json"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the client went away: nothing to do
}

// errorJSON is the body of every error answer.
type errorJSON struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Detail  string `json:"detail,omitempty"`
		Hint    string `json:"hint,omitempty"`
	} `json:"error"`
}

// writeError answers err as JSON, with its SQLSTATE (XX000 for an error
// without one) and the HTTP status that fits it.
func writeError(w http.ResponseWriter, err error) { writeErrorStatus(w, 0, err) }

// writeErrorStatus is writeError with status, or the one that fits the
// SQLSTATE if status is 0.
func writeErrorStatus(w http.ResponseWriter, status int, err error) {
	var body errorJSON
	if e, ok := sqlerr.As(err); ok {
		body.Error.Code, body.Error.Message, body.Error.Detail, body.Error.Hint = string(e.Code), e.Message, e.Detail, e.Hint
	} else {
		body.Error.Code, body.Error.Message = string(sqlerr.Internal), err.Error()
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			body.Error.Code = string(sqlerr.QueryCanceled)
		}
	}
	if status == 0 {
		status = httpStatus(sqlerr.Code(body.Error.Code))
	}
	writeJSON(w, status, body)
}

// httpStatus maps a SQLSTATE to the HTTP status that fits it.
func httpStatus(c sqlerr.Code) int {
	switch c {
	case sqlerr.UndefinedObject, sqlerr.UndefinedTable:
		return http.StatusNotFound
	case codeInvalidPassword:
		return http.StatusUnauthorized
	case sqlerr.InsufficientPrivilege:
		return http.StatusForbidden
	case sqlerr.DependentObjectsStillExist, sqlerr.ObjectInUse, sqlerr.WrongObjectType:
		return http.StatusConflict
	case sqlerr.QueryCanceled:
		return http.StatusServiceUnavailable
	case sqlerr.Internal:
		return http.StatusInternalServerError
	}
	return http.StatusBadRequest // a bad argument, mostly class 22
}
