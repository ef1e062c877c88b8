//go:build race

package soap_test

// raceEnabled: the race detector multiplies the reader's time about tenfold, so the memory test
// reads only its cheapest body (scripts/test.sh runs every package under -race).
const raceEnabled = true
