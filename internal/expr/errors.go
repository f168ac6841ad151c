package expr

import (
	"fmt"
	"strings"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Row errors, worded as Postgres words them.

func errIntRange(t types.Type) error {
	return sqlerr.Errorf(sqlerr.NumericValueOutOfRange, "%s out of range", t)
}

func errDivByZero() error { return sqlerr.New(sqlerr.DivisionByZero, "division by zero") }

func errFloatOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
}

func errFloatUnderflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
}

func errNumericOverflow() error {
	return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
}

func errIntervalRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
}

func errTimestampRange() error {
	return sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
}

func errDateRange() error { return sqlerr.New(sqlerr.DatetimeFieldOverflow, "date out of range") }

// Build errors: a malformed Desc or a call with no matching function.

func errBuild(format string, args ...any) error {
	return sqlerr.Errorf(sqlerr.Internal, "expr: malformed expression: "+format, args...)
}

// isOperator reports whether name is spelled with operator characters.
func isOperator(name string) bool {
	return name != "" && strings.Trim(name, "+-*/%<>=!~|&#^@") == ""
}

// errUndefined is Postgres's "operator does not exist" / "function does not
// exist" (42883), with its hint.
func errUndefined(name string, args []types.Type) error {
	names := make([]string, len(args))
	for i, t := range args {
		names[i] = t.String()
	}
	var e *sqlerr.Error
	switch {
	case isOperator(name) && len(args) == 2:
		e = sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s %s", names[0], name, names[1])
	case isOperator(name) && len(args) == 1:
		e = sqlerr.Errorf(sqlerr.UndefinedFunction, "operator does not exist: %s %s", name, names[0])
	default:
		e = sqlerr.Errorf(sqlerr.UndefinedFunction, "function %s(%s) does not exist", name, strings.Join(names, ", "))
	}
	what := "function"
	if isOperator(name) {
		what = "operator"
	}
	e.Hint = fmt.Sprintf("No %s matches the given name and argument types. You might need to add explicit type casts.", what)
	return e
}
