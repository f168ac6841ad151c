//go:build invariants

package barrier

// invariantsEnabled makes every event check the coordinator's invariants
// and panic on a violation (go test -tags invariants).
const invariantsEnabled = true
