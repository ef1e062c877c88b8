package api

import (
	"time"

	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/soap"
)

// RESTObserver is the rest.Params.Observe that counts, for m, every operation a REST request
// runs in mapfarm_rest_operations_total{operation,outcome} and
// mapfarm_rest_operation_duration_seconds{operation}: the operation names and outcomes of the
// SOAP metrics (the same error is the same outcome), so the two transports compare. A refusal by
// a request limit is also counted in mapfarm_limit_refusals_total, as for SOAP. A nil m counts
// nothing.
func RESTObserver(m *metrics.Metrics) func(op string, start time.Time, err error) {
	return func(op string, start time.Time, err error) {
		if m == nil {
			return
		}
		outcome := "ok"
		if err != nil {
			m.Refused(err)
			outcome = "server_fault"
			if toFault(err).Code == soap.FaultClient {
				outcome = "client_fault"
			}
		}
		m.RESTOperations.WithLabelValues(op, outcome).Inc()
		m.RESTDuration.WithLabelValues(op).Observe(time.Since(start).Seconds())
	}
}

// WMSObserver is the wms.Params.Observe that counts, for m, the refusals of the request limits
// of the operations a WMS request runs in mapfarm_limit_refusals_total, as for SOAP and REST. A
// nil m counts nothing.
func WMSObserver(m *metrics.Metrics) func(op string, start time.Time, err error) {
	return func(op string, start time.Time, err error) {
		if m != nil && err != nil {
			m.Refused(err)
		}
	}
}
