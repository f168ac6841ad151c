// Package aggval holds the running value of sum and avg over a set of
// rows the way Postgres computes them: integers summed exactly (bigint
// results checked for overflow), floats in float64, numeric in apd with
// NaN and ±Infinity counted apart (apd cannot add them as Postgres's
// numeric does: Inf + -Inf is NaN there, an error in apd).
//
// The batch executor's aggregation and the window functions
// (internal/window) share it, so a sum over a GROUP BY and over a window
// frame are the same value of the same type.
package aggval
