package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// hasAggregate reports whether n contains an aggregate call outside any
// subquery. It walks the protobuf message generically, so it sees every
// kind of expression node without listing them.
func hasAggregate(n *pg_query.Node) bool {
	found := false
	walkNodes(n, func(x any) bool {
		switch x := x.(type) {
		case *pg_query.FuncCall:
			if aggNames[funcName(x)] && x.Over == nil {
				found = true
			}
		case *pg_query.SubLink, *pg_query.SelectStmt:
			return false
		}
		return !found
	})
	return found
}

// walkNodes calls f on every message under n (the Go value of each
// pg_query node struct), descending where f returns true.
func walkNodes(n *pg_query.Node, f func(any) bool) {
	if n == nil {
		return
	}
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if !f(m.Interface()) {
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
			return true
		})
	}
	visit(n.ProtoReflect())
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
