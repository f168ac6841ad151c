package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// hasAggregate reports whether n contains an aggregate call outside any
// subquery. It walks the protobuf message generically, so it sees every
// kind of expression node without listing them.
func hasAggregate(n *pg_query.Node) bool {
	if n == nil {
		return false
	}
	found := false
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if found {
			return
		}
		switch x := m.Interface().(type) {
		case *pg_query.FuncCall:
			if aggNames[funcName(x)] && x.Over == nil {
				found = true
				return
			}
		case *pg_query.SubLink, *pg_query.SelectStmt:
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message())
				}
			case fd.Message() != nil && !fd.IsMap():
				visit(v.Message())
			}
			return !found
		})
	}
	visit(n.ProtoReflect())
	return found
}

// anyAggregate reports whether any of ns contains an aggregate call.
func anyAggregate(ns ...*pg_query.Node) bool {
	for _, n := range ns {
		if hasAggregate(n) {
			return true
		}
	}
	return false
}
