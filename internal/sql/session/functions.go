package session

import (
	"context"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// createFunction records a SQL function (planner/function.go).
func (s *Session) createFunction(ctx context.Context, r *planner.CreateFunction, w pgwire.ResultWriter) error {
	cat := s.e.Catalog()
	if old, ok := cat.Function(r.Fn.Name); ok {
		if !sameSignature(old, r.Fn) {
			return sqlerr.Errorf(sqlerr.FeatureNotSupported,
				"function %q exists with other argument types; overloading a function name is not supported", old.Name)
		}
		if !r.Replace {
			return sqlerr.Errorf(sqlerr.Code("42723"), "function %q already exists", old.Name)
		}
	}
	r.Fn.Owner = s.user
	if err := cat.PutFunction(ctx, r.Fn); err != nil {
		return err
	}
	return w.Complete("CREATE FUNCTION")
}

// dropFunction deletes SQL functions; calls already inlined in views stay.
func (s *Session) dropFunction(ctx context.Context, r *planner.DropFunction, w pgwire.ResultWriter) error {
	cat := s.e.Catalog()
	for _, name := range r.Names {
		if _, ok := cat.Function(name); !ok {
			if r.IfExists {
				if err := w.Notice(pgwire.Notice{Code: sqlerr.UndefinedObject,
					Message: "function " + name + "() does not exist, skipping"}); err != nil {
					return err
				}
				continue
			}
			return sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s does not exist", name)
		}
		if err := cat.DropFunction(ctx, name); err != nil {
			return err
		}
	}
	return w.Complete("DROP FUNCTION")
}

func sameSignature(a, b catalog.Function) bool {
	if len(a.Args) != len(b.Args) {
		return false
	}
	for i := range a.Args {
		if a.Args[i].Type != b.Args[i].Type {
			return false
		}
	}
	return true
}
