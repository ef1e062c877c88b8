// Package metrics defines the farm's Prometheus metrics. Each process makes one Metrics value
// with New, on a registry of its own (never the global one), and hands it to its components;
// the api serves it at /metrics, workers and the coordinator on their metrics address.
//
// The metrics, all prefixed mapfarm_:
//
//	soap_requests_total{operation,outcome}     outcome: ok, client_fault, server_fault
//	soap_request_duration_seconds{operation}   api time per SOAP request
//	rest_operations_total{operation,outcome}   operations REST requests ran (the SOAP names; outcome as SOAP's)
//	rest_operation_duration_seconds{operation} api time per operation a REST request ran
//	task_duration_seconds{type}                worker time per task (draw + encode + store)
//	tasks_total{type,result}                   result: ok, client_error, error
//	store_operation_duration_seconds{op}       object store latency per operation
//	store_errors_total{op}
//	queue_tasks{queue,state}                   asynq queue sizes (pending, active, scheduled, retry)
//	queue_latency_seconds{queue}               age of the oldest pending task
//	seed_tiles{job,state}                      seeding progress (done, failed, total)
//	cache_hits_total{cache}, cache_misses_total{cache}, cache_evictions_total{cache},
//	cache_bytes{cache}, cache_max_bytes{cache}, cache_entries{cache}
//	                                           every in-memory cache (internal/memcache)
//	limit_refusals_total{limit}                requests refused for being over a limit, by the
//	                                           limit's configuration key (internal/limits)
//	limit{limit}                               each limit's configured value
//
// queue_tasks{state="pending"} and queue_latency_seconds are what worker autoscaling reads.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mapfarm/mapfarm/internal/limits"
)

// Metrics holds one process's metrics.
type Metrics struct {
	Registry     *prometheus.Registry
	SOAPRequests *prometheus.CounterVec
	SOAPDuration *prometheus.HistogramVec
	// RESTOperations and RESTDuration count the operations the REST API runs, under the
	// operation names and outcomes SOAPRequests uses, so the two transports compare.
	RESTOperations *prometheus.CounterVec
	RESTDuration   *prometheus.HistogramVec
	TaskDuration   *prometheus.HistogramVec
	Tasks          *prometheus.CounterVec
	StoreDuration  *prometheus.HistogramVec
	StoreErrors    *prometheus.CounterVec
	QueueTasks     *prometheus.GaugeVec
	QueueLatency   *prometheus.GaugeVec
	SeedTiles      *prometheus.GaugeVec
	// RefreshBacklog and RefreshOldest are each cache's dirty areas waiting for a refresh job
	// and the age of the oldest; RefreshJobs and RefreshAreas count the refresh jobs submitted
	// and the dirty areas they took (their rates are the refresh rate). The coordinator sets
	// them (docs/freshness.md).
	RefreshBacklog *prometheus.GaugeVec
	RefreshOldest  *prometheus.GaugeVec
	RefreshJobs    prometheus.Counter
	RefreshAreas   prometheus.Counter
	// LimitRefusals counts the requests refused by each limit (use Refused).
	LimitRefusals *prometheus.CounterVec
	// Limit is each limit's configured value (internal/app sets it).
	Limit *prometheus.GaugeVec

	caches *cacheCollector
}

// latencyBuckets span 0.5 ms to 30 s.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns the metrics registered on a fresh registry, with Go runtime and process metrics.
func New() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		SOAPRequests: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mapfarm", Name: "soap_requests_total",
			Help: "SOAP requests by operation and outcome (ok, client_fault, server_fault)."}, []string{"operation", "outcome"}),
		SOAPDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "mapfarm", Name: "soap_request_duration_seconds",
			Help: "Time the api spends on one SOAP request.", Buckets: latencyBuckets}, []string{"operation"}),
		RESTOperations: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mapfarm", Name: "rest_operations_total",
			Help: "Operations run for REST requests, by operation and outcome (ok, client_fault, server_fault)."}, []string{"operation", "outcome"}),
		RESTDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "mapfarm", Name: "rest_operation_duration_seconds",
			Help: "Time one operation of a REST request takes.", Buckets: latencyBuckets}, []string{"operation"}),
		TaskDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "mapfarm", Name: "task_duration_seconds",
			Help: "Time a worker spends on one task.", Buckets: latencyBuckets}, []string{"type"}),
		Tasks: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mapfarm", Name: "tasks_total",
			Help: "Tasks processed by type and result (ok, client_error, error)."}, []string{"type", "result"}),
		StoreDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: "mapfarm", Name: "store_operation_duration_seconds",
			Help: "Object store latency by operation.", Buckets: latencyBuckets}, []string{"op"}),
		StoreErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mapfarm", Name: "store_errors_total",
			Help: "Object store operations that failed (a missing object on a read is not a failure)."}, []string{"op"}),
		QueueTasks: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "queue_tasks",
			Help: "Tasks in each queue by state."}, []string{"queue", "state"}),
		QueueLatency: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "queue_latency_seconds",
			Help: "Age of the oldest pending task of each queue."}, []string{"queue"}),
		SeedTiles: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "seed_tiles",
			Help: "Seeding progress by job and state (done, failed, total)."}, []string{"job", "state"}),
		RefreshBacklog: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "refresh_backlog_areas",
			Help: "Dirty areas waiting for a refresh job, by cache (service/map)."}, []string{"cache"}),
		RefreshOldest: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "refresh_backlog_oldest_seconds",
			Help: "Age of the oldest dirty area waiting for a refresh job, by cache (service/map)."}, []string{"cache"}),
		RefreshJobs: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "mapfarm", Name: "refresh_jobs_total",
			Help: "Refresh jobs submitted for changed data or expired areas."}),
		RefreshAreas: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "mapfarm", Name: "refresh_areas_total",
			Help: "Dirty areas (change batches and expires) taken into refresh jobs."}),
		LimitRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "mapfarm", Name: "limit_refusals_total",
			Help: "Requests refused for being over a limit, by the limit's configuration key (docs/limits.md)."}, []string{"limit"}),
		Limit: prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: "mapfarm", Name: "limit",
			Help: "Each limit's configured value, by its configuration key (docs/limits.md)."}, []string{"limit"}),
		caches: newCacheCollector(),
	}
	for _, name := range limits.Names() {
		m.LimitRefusals.WithLabelValues(string(name)) // every limit is reported, from zero
	}
	r.MustRegister(m.SOAPRequests, m.SOAPDuration, m.RESTOperations, m.RESTDuration, m.TaskDuration, m.Tasks, m.StoreDuration, m.StoreErrors,
		m.QueueTasks, m.QueueLatency, m.SeedTiles, m.RefreshBacklog, m.RefreshOldest, m.RefreshJobs, m.RefreshAreas, m.LimitRefusals, m.Limit, m.caches,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Refused counts a request refused because err reports it over a limit (a *limits.Error in
// err's chain); it reports whether it was. A nil Metrics counts nothing.
func (m *Metrics) Refused(err error) bool {
	name, ok := limits.Of(err)
	if ok && m != nil {
		m.LimitRefusals.WithLabelValues(string(name)).Inc()
	}
	return ok
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}
