package postgis

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/mapfarm/mapfarm/internal/feature"
)

// classify turns a pgx error into the error a caller can act on, naming
// the source:
//
//   - the database cannot be reached or went away: feature.ErrUnavailable;
//   - the statement ran out of time (the request's deadline or the
//     server's statement_timeout): "<source>: query timed out", wrapping
//     context.DeadlineExceeded;
//   - the request was cancelled: wraps context.Canceled;
//   - the database refused the statement as malformed (a data exception, an
//     undefined column or function): feature.ErrQuery.
func classify(source string, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case pgErr.Code == "57014" && strings.Contains(pgErr.Message, "statement timeout"):
			return fmt.Errorf("%s: query timed out after %v (statement_timeout): %w", source, timeout,
				errors.Join(context.DeadlineExceeded, err))
		case pgErr.Code == "57014":
			return fmt.Errorf("%s: query cancelled: %w", source, errors.Join(context.Canceled, err))
		case strings.HasPrefix(pgErr.Code, "08"), pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03",
			pgErr.Code == "53300":
			return feature.Unavailable(source, err)
		case strings.HasPrefix(pgErr.Code, "22"), strings.HasPrefix(pgErr.Code, "42"):
			return fmt.Errorf("%s: %w: %s", source, feature.ErrQuery, pgErr.Message)
		}
		return fmt.Errorf("%s: %w", source, err)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: query timed out: %w", source, err)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("%s: query cancelled: %w", source, err)
	}
	var connErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connErr) || errors.As(err, &netErr) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) || pgconn.SafeToRetry(err) ||
		strings.Contains(err.Error(), "conn closed") {
		return feature.Unavailable(source, err)
	}
	return fmt.Errorf("%s: %w", source, err)
}

// ctxErr prefers the context's own error when it has ended: pgx may
// report a cancelled statement as a broken connection.
func ctxErr(ctx context.Context, source string, err error, timeout time.Duration) error {
	if err == nil {
		return nil
	}
	if c := ctx.Err(); c != nil {
		if errors.Is(c, context.DeadlineExceeded) {
			return fmt.Errorf("%s: query timed out: %w", source, errors.Join(c, err))
		}
		return fmt.Errorf("%s: query cancelled: %w", source, errors.Join(c, err))
	}
	return classify(source, err, timeout)
}
