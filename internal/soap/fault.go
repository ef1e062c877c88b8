package soap

import (
	"errors"

	"github.com/mapfarm/mapfarm/internal/quote"
)

// FaultCode is a SOAP 1.1 fault code.
type FaultCode string

// The fault codes mapfarm sends: Client for a request that cannot succeed as sent, Server for
// everything else.
const (
	FaultClient FaultCode = "soap:Client"
	FaultServer FaultCode = "soap:Server"
)

// Fault is a SOAP 1.1 fault. On the wire:
//
//	<soap:Fault>
//	  <faultcode>soap:Client</faultcode>
//	  <faultstring>ExportMapImage/ImageDescription/ImageDisplay/ImageWidth: 100000 is larger than the limit of 4096 pixels</faultstring>
//	  <detail/>
//	</soap:Fault>
type Fault struct {
	Code   FaultCode
	String string
	Err    error // the cause, kept for logs; never sent
}

func (f *Fault) Error() string { return string(f.Code) + ": " + f.String }
func (f *Fault) Unwrap() error { return f.Err }

// MaxFaultString is the longest faultstring written: a longer message is cut with an ellipsis
// (WriteFault). A value of the request quoted in a fault is cut sooner, to quote.MaxLen
// characters, where the fault is built (ClientFault, decoding errors, the operations' errors).
const MaxFaultString = 1000

// ServerFaultString is the faultstring of a soap:Server fault made from an error: the error's
// own text (store keys, addresses, internal causes) goes to the server's log, not to clients.
const ServerFaultString = "the server could not process the request; the cause is in the server's log"

// ClientFault returns a soap:Client fault with a formatted message; the values it quotes are
// cut to quote.MaxLen characters.
func ClientFault(format string, args ...any) *Fault {
	return &Fault{Code: FaultClient, String: quote.Sprintf(format, args...)}
}

// BadRequest marks an error as the client's: AsFault turns it into a soap:Client fault.
type BadRequest struct{ Err error }

func (b *BadRequest) Error() string { return b.Err.Error() }
func (b *BadRequest) Unwrap() error { return b.Err }

// AsFault translates any error into the fault sent to the client. It is the one place where
// errors become faults: a *Fault passes through, an error wrapping *BadRequest or a decoding
// error becomes soap:Client with the error's text, everything else soap:Server with
// ServerFaultString (the error stays in Err, for the log).
func AsFault(err error) *Fault {
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	var br *BadRequest
	if errors.As(err, &br) {
		return &Fault{Code: FaultClient, String: err.Error(), Err: err}
	}
	return &Fault{Code: FaultServer, String: ServerFaultString, Err: err}
}
