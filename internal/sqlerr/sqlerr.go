// Package sqlerr carries Postgres SQLSTATE codes on errors. Any layer that
// knows what kind of failure it has (a bad cast, a division by zero, an
// unknown table) returns an *Error; pgwire sends its Code to the client, and
// tests match on Code, never on message text.
package sqlerr

import (
	"errors"
	"fmt"
)

// Code is a five-character SQLSTATE.
type Code string

// The SQLSTATEs Sluice uses. Names follow Postgres's errcodes.txt.
const (
	SuccessfulCompletion            Code = "00000"
	Warning                         Code = "01000"
	FeatureNotSupported             Code = "0A000"
	CardinalityViolation            Code = "21000"
	DataException                   Code = "22000"
	StringDataRightTruncation       Code = "22001"
	NumericValueOutOfRange          Code = "22003"
	NullValueNotAllowed             Code = "22004"
	InvalidDatetimeFormat           Code = "22007"
	DatetimeFieldOverflow           Code = "22008"
	InvalidParameterValue           Code = "22023"
	DivisionByZero                  Code = "22012"
	InvalidTextRepresentation       Code = "22P02"
	InvalidBinaryRepresentation     Code = "22P03"
	IntervalFieldOverflow           Code = "22015"
	InvalidArgumentForNtile         Code = "22014"
	InvalidArgumentForNthValue      Code = "22016"
	InvalidPrecedingOrFollowingSize Code = "22013"
	NotNullViolation                Code = "23502"
	UniqueViolation                 Code = "23505"
	InvalidTransactionState         Code = "25000"
	SyntaxError                     Code = "42601"
	UndefinedColumn                 Code = "42703"
	UndefinedTable                  Code = "42P01"
	UndefinedFunction               Code = "42883"
	UndefinedObject                 Code = "42704"
	InvalidSchemaName               Code = "3F000"
	IndeterminateDatatype           Code = "42P18"
	DuplicateTable                  Code = "42P07"
	DuplicateObject                 Code = "42710"
	AmbiguousColumn                 Code = "42702"
	DatatypeMismatch                Code = "42804"
	CannotCoerce                    Code = "42846"
	GroupingError                   Code = "42803"
	WindowingError                  Code = "42P20"
	InvalidColumnReference          Code = "42P10"
	WrongObjectType                 Code = "42809"
	InsufficientPrivilege           Code = "42501"
	DependentObjectsStillExist      Code = "2BP01"
	QueryCanceled                   Code = "57014"
	AdminShutdown                   Code = "57P01"
	ObjectInUse                     Code = "55006"
	CantChangeRuntimeParam          Code = "55P02"
	IdleInTransactionTimeout        Code = "25P03"
	ProgramLimitExceeded            Code = "54000"
	StatementTooComplex             Code = "54001"
	ConfigurationLimitExceeded      Code = "53400"
	TooManyConnections              Code = "53300"
	DiskFull                        Code = "53100"
	OutOfMemory                     Code = "53200"
	Internal                        Code = "XX000"
)

// Error is an error with a SQLSTATE. Position, when non-zero, is the
// 1-based character offset in the statement that the error points at.
type Error struct {
	Code     Code
	Message  string
	Detail   string
	Hint     string
	Position int
}

func (e *Error) Error() string { return e.Message }

// New returns an error with the given code and message.
func New(code Code, msg string) *Error { return &Error{Code: code, Message: msg} }

// Errorf returns an error with the given code and a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the SQLSTATE of err: the Code of the first *Error in its
// chain, or Internal when there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// As returns the first *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// WithDetail returns a copy of e with its DETAIL set.
func (e *Error) WithDetail(detail string) *Error {
	out := *e
	out.Detail = detail
	return &out
}

// WithHint returns a copy of e with its HINT set.
func (e *Error) WithHint(hint string) *Error {
	out := *e
	out.Hint = hint
	return &out
}
