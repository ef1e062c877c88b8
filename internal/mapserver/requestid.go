package mapserver

import "context"

type requestIDKey struct{}

// WithRequestID returns ctx carrying the id of the HTTP request it serves. Front ends that
// take a request id from their router (WMS, WMTS) read it back with RequestID to log it and
// to fill Call.RequestID.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the id WithRequestID put in ctx, "" if there is none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}
