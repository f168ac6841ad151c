package storage

import "errors"

// Error kinds callers match with errors.Is.
var (
	// ErrStaleTable: the store aborted its uncommitted state
	// (AbortUncommitted) after this StateTable was opened; reopen it.
	ErrStaleTable = errors.New("state table is stale after abort of uncommitted state")
	// ErrTableDropped: DropTableState ran after this StateTable was opened.
	ErrTableDropped = errors.New("state table was dropped")
	// ErrActorFenced: the actor's writes were discarded (its job was
	// dropped); it may be still running for a moment, but nothing it
	// stages from then on may reach a commit.
	ErrActorFenced = errors.New("actor was dropped; its writes are fenced off")
	// ErrVNodeNotOwned: a row's vnode is not among the table's vnodes; the
	// dispatcher sent a row to the wrong actor.
	ErrVNodeNotOwned = errors.New("row's vnode is not owned by this state table")
	// ErrBadDesc: a TableDesc that cannot describe a table.
	ErrBadDesc = errors.New("bad table descriptor")
)
