package barrier

import (
	"testing"

	"github.com/cockroachdb/datadriven"
)

// dropJobs runs `drop-jobs`: several jobs dropped in one event, as the
// coordinator applies one DROP … CASCADE or one CANCEL JOBS of several ids
// (one DropJobs, then the actions are read). Input: one job per
// line, `job=3 actors=(3,4)`, in the order the drops are applied. A job
// whose drop fails is printed as an error; the others still drop.
func (h *harness) dropJobs(t *testing.T, d *datadriven.TestData, out *[]string) {
	var drops []JobDrop
	for _, j := range parseJobs(t, d) {
		drops = append(drops, JobDrop{Job: j.ID, Actors: j.Actors})
	}
	if err := h.m.DropJobs(drops); err != nil {
		*out = append(*out, "error: "+err.Error())
	}
}
