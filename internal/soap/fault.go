package soap

import (
	"errors"
	"fmt"
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

// ClientFault returns a soap:Client fault with a formatted message.
func ClientFault(format string, args ...any) *Fault {
	return &Fault{Code: FaultClient, String: fmt.Sprintf(format, args...)}
}

// BadRequest marks an error as the client's: AsFault turns it into a soap:Client fault.
type BadRequest struct{ Err error }

func (b *BadRequest) Error() string { return b.Err.Error() }
func (b *BadRequest) Unwrap() error { return b.Err }

// AsFault translates any error into the fault sent to the client. It is the one place where
// errors become faults: a *Fault passes through, an error wrapping *BadRequest or a decoding
// error becomes soap:Client, everything else soap:Server with the error's text.
func AsFault(err error) *Fault {
	var f *Fault
	if errors.As(err, &f) {
		return f
	}
	var br *BadRequest
	if errors.As(err, &br) {
		return &Fault{Code: FaultClient, String: err.Error(), Err: err}
	}
	return &Fault{Code: FaultServer, String: err.Error(), Err: err}
}
