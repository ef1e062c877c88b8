package rest

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/mapfarm/mapfarm/internal/farm"
	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/mapserver"
	"github.com/mapfarm/mapfarm/internal/quote"
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
// details. The values it quotes are cut to quote.MaxLen characters.
func badRequest(format string, args ...any) *Error {
	return &Error{Code: http.StatusBadRequest, Message: "Invalid or missing input parameters.", Details: []string{quote.Sprintf(format, args...)}}
}

// invalidSRMessage is ArcGIS's message for a spatial reference that is not one.
const invalidSRMessage = "Invalid spatial reference"

// invalidSR is ArcGIS's answer to a spatial reference parameter that is not one (a WKT that
// is not a WKT): 400 "Invalid spatial reference", on every operation, the parameter and the
// cause in details.
func invalidSR(name string, err error) *Error {
	return &Error{Code: http.StatusBadRequest, Message: invalidSRMessage, Details: []string{fmt.Sprintf("'%s' parameter: %v", name, err)}, err: err}
}

func notFoundErr(format string, args ...any) *Error {
	return &Error{Code: http.StatusNotFound, Message: quote.Sprintf(format, args...), Details: []string{}}
}

// maxDetail is the most characters of one message or detail an error body carries, as
// soap.MaxFaultString bounds a faultstring: the values quoted in it are cut to quote.MaxLen
// already, this bounds the whole.
const maxDetail = 1000

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
// for f=image and f=html the status is the error's code too, and so it is for 413 and 415 (a
// body refused unread) and 429 (over the rate limit), which clients must see. The format is
// read from the query string, or from a form body already parsed: WriteError never reads the
// body, so a refused request's body stays unread.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, formatOf(r), asError(err))
}

// formatOf is the request's f parameter, lower-cased: from r.Form when the form was parsed,
// else from the query string.
func formatOf(r *http.Request) string {
	v := r.Form
	if v == nil {
		v = r.URL.Query()
	}
	return strings.ToLower(v.Get("f"))
}

func writeError(w http.ResponseWriter, f string, e *Error) {
	var b jsonWriter
	b.objOpen()
	b.key("error")
	b.objOpen()
	b.key("code")
	b.int(int64(e.Code))
	b.key("message")
	b.str(quote.Clip(e.Message, maxDetail))
	b.key("details")
	b.arrOpen()
	for _, d := range e.Details {
		b.str(quote.Clip(d, maxDetail))
	}
	b.arrClose()
	b.objClose()
	b.objClose()
	status := http.StatusOK
	if e.Code == http.StatusRequestEntityTooLarge || e.Code == http.StatusUnsupportedMediaType || e.Code == http.StatusTooManyRequests ||
		f == "image" || f == "kmz" || f == "html" {
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
	writeError(q.w, q.f, h.asLoggedError(q, err))
}

// asLoggedError is asError that logs a server error's cause at ERROR, with the request's id.
func (h *Handler) asLoggedError(q *request, err error) *Error {
	e := asError(err)
	if e.Code == http.StatusServiceUnavailable {
		h.p.Logger.Warn("heavy request refused: no slot of the heavy lane before its deadline", "path", q.r.URL.Path, "request_id", requestID(q.r))
	} else if e.Code >= 500 {
		h.p.Logger.Error("rest operation failed", "request_id", requestID(q.r), "path", q.r.URL.Path, "err", err)
	}
	return e
}

// requestID is the id of the request, which its answer carries in X-Request-Id: the api's
// request log (api/server.go) sets the request's header to the id it gives the answer.
func requestID(r *http.Request) string { return r.Header.Get("X-Request-Id") }

// badJSON is the 400 of a parameter whose JSON does not decode: where and what was wrong, in
// the words of JSON (a number, an array), never the Go types it was being decoded into, and
// without the value itself.
func badJSON(param string, err error) *Error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return badRequest("'%s' parameter is invalid: malformed JSON at character %d", param, syn.Offset)
	case errors.As(err, &typ):
		at := ""
		if typ.Field != "" {
			at = " at " + typ.Field
		}
		return badRequest("'%s' parameter is invalid: %s%s where %s is expected", param, jsonKind(typ.Value), at, jsonWant(typ.Type))
	}
	return badRequest("'%s' parameter is invalid: malformed JSON", param)
}

// jsonKind names a JSON value as encoding/json's UnmarshalTypeError.Value describes it
// ("string", "number 1.5", "array", "object", "bool").
func jsonKind(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "array", "object":
		return "an " + kind
	case "bool":
		return "true or false"
	case "":
		return "a value"
	}
	return "a " + kind
}

// jsonWant names in JSON's words what a Go type decodes from.
func jsonWant(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonWant(t.Elem())
	}
	return "a number"
}
