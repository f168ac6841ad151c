//go:build !invariants

package barrier

const invariantsEnabled = false
