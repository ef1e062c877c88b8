package rest

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
)

// Error is an ArcGIS REST error: {"error":{"code":…,"message":…,"details":[…]}}.
type Error struct {
	Code    int
	Message string
	Details []string
	err     error // the cause, logged for server errors
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s %v", e.Code, e.Message, e.Details) }

func (e *Error) Unwrap() error { return e.err }

// badRequest is ArcGIS's answer to a bad parameter: code 400, a generic message, the cause in
// details.
func badRequest(format string, args ...any) *Error {
	return &Error{Code: http.StatusBadRequest, Message: "Invalid or missing input parameters.", Details: []string{fmt.Sprintf(format, args...)}}
}

func notFoundErr(format string, args ...any) *Error {
	return &Error{Code: http.StatusNotFound, Message: fmt.Sprintf(format, args...), Details: []string{}}
}

// NewError is the error a front end writes for a refused request (a missing or invalid token,
// a rate limit): ArcGIS's 499 Token Required, 498 Invalid Token, 403, 429.
func NewError(code int, message string) *Error {
	return &Error{Code: code, Message: message, Details: []string{}}
}

// asError is the one place errors become REST errors: an operation's request error is 400
// "Unable to complete operation." with its explanation in details (404 for something missing),
// anything else a 500 whose cause goes only to the log.
func asError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, mapserver.ErrNotFound):
		return &Error{Code: http.StatusNotFound, Message: "Unable to complete operation.", Details: []string{err.Error()}, err: err}
	case errors.Is(err, mapserver.ErrInvalidArgument):
		return &Error{Code: http.StatusBadRequest, Message: "Unable to complete operation.", Details: []string{err.Error()}, err: err}
	case errors.Is(err, limits.ErrBusy):
		return &Error{Code: http.StatusServiceUnavailable, Message: "The server is busy with other large requests; try again later.", Details: []string{}, err: err}
	case errors.Is(err, farm.ErrTimeout):
		return &Error{Code: http.StatusGatewayTimeout, Message: "The render farm did not answer in time; try again.", Details: []string{}, err: err}
	}
	return &Error{Code: http.StatusInternalServerError, Message: "Unable to complete operation.", Details: []string{}, err: err}
}

// WriteError writes err as ArcGIS does. For the JSON formats (f=json, pjson, geojson, none, and
// any unknown f) the HTTP status is 200 and the code is in the body, as ArcGIS Server answers;
// for f=image and f=html the status is the error's code too, and so it is for 429 (over the
// rate limit), which clients must see to back off.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	f := r.FormValue("f")
	writeError(w, f, asError(err))
}

func writeError(w http.ResponseWriter, f string, e *Error) {
	var b jsonWriter
	b.objOpen()
	b.key("error")
	b.objOpen()
	b.key("code")
	b.int(int64(e.Code))
	b.key("message")
	b.str(e.Message)
	b.key("details")
	b.arrOpen()
	for _, d := range e.Details {
		b.str(d)
	}
	b.arrClose()
	b.objClose()
	b.objClose()
	status := http.StatusOK
	if e.Code == http.StatusTooManyRequests || f == "image" || f == "kmz" || f == "html" {
		status = e.Code
		if status < 400 || status > 599 {
			status = http.StatusBadRequest
		}
	}
	out := b.bytes()
	if f == "pjson" {
		out = indent(out)
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

func (h *Handler) writeError(q *request, err error) {
	e := asError(err)
	if e.Code == http.StatusServiceUnavailable {
		h.p.Logger.Warn("heavy request refused: no slot of the heavy lane before its deadline", "path", q.r.URL.Path, "request_id", q.r.Header.Get("X-Request-Id"))
	} else if e.Code >= 500 {
		h.p.Logger.Error("rest operation failed", "path", q.r.URL.Path, "request_id", q.r.Header.Get("X-Request-Id"), "err", err)
	}
	writeError(q.w, q.f, e)
}
