package web

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"

	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// actionBody is an action's optional JSON body.
type actionBody struct {
	// RowsPerSecond is rate-limit's limit; null or absent: no limit (SET
	// RATE_LIMIT = DEFAULT).
	RowsPerSecond *int64 `json:"rows_per_second"`
	// Cascade makes drop also drop what is built on the job.
	Cascade bool `json:"cascade"`
}

// maxActionBody bounds an action's body: it holds a number and a flag.
const maxActionBody = 4 << 10

// serveAction runs POST /api/jobs/{id}/{action} and answers the job as
// it is afterwards ({"dropped": true} once it is gone).
func (h *Handler) serveAction(w http.ResponseWriter, r *http.Request) {
	if err := h.authorize(r); err != nil {
		writeError(w, err)
		return
	}
	d, err := h.job(r)
	if err != nil {
		writeError(w, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), actionTimeout)
	defer cancel()
	if err := h.act(ctx, r.PathValue("action"), d.JobSummary, body); err != nil {
		writeError(w, err)
		return
	}
	after, ok := h.cfg.Engine.JobDetail(d.ID)
	if !ok || after.Name != d.Name {
		writeJSON(w, http.StatusOK, map[string]any{"id": d.ID, "name": d.Name, "dropped": true})
		return
	}
	writeJSON(w, http.StatusOK, detailJSON(after))
}

// act runs one action on job j through the engine's control path.
func (h *Handler) act(ctx context.Context, action string, j engine.JobSummary, body actionBody) error {
	c := h.cfg.Engine
	switch action {
	case "pause":
		return c.SetPaused(ctx, j.Name, true)
	case "resume":
		return c.SetPaused(ctx, j.Name, false)
	case "rate-limit":
		return c.SetRateLimit(ctx, j.Name, body.RowsPerSecond)
	case "cancel":
		return c.CancelJobs(ctx, []uint64{uint64(j.ID)})
	case "drop":
		return c.Drop(ctx, j.Name, body.Cascade)
	}
	return sqlerr.Errorf(sqlerr.UndefinedObject, "no action %q: pause, resume, rate-limit, cancel or drop", action)
}

// readBody decodes the request's body, which may be empty.
func readBody(r *http.Request) (actionBody, error) {
	var b actionBody
	dec := json.NewDecoder(io.LimitReader(r.Body, maxActionBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b); err != nil && !errors.Is(err, io.EOF) {
		return b, sqlerr.Errorf(sqlerr.InvalidParameterValue, "invalid action body: %v", err)
	}
	return b, nil
}
