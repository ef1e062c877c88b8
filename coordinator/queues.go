package coordinator

import (
	"log/slog"
	"slices"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/metrics"
)

// queueStats publishes the asynq queues' sizes and latencies as metrics: what worker
// autoscaling reads.
type queueStats struct {
	inspector *asynq.Inspector
	queues    []string
	m         *metrics.Metrics
	logger    *slog.Logger
}

// exec reads every queue once. A queue nobody has used yet does not exist in Redis: it counts
// as empty.
func (q *queueStats) exec() {
	known, err := q.inspector.Queues()
	if err != nil {
		q.logger.Warn("list queues", "err", err)
		return
	}
	for _, name := range q.queues {
		if !slices.Contains(known, name) {
			for _, state := range []string{"pending", "active", "scheduled", "retry"} {
				q.m.QueueTasks.WithLabelValues(name, state).Set(0)
			}
			q.m.QueueLatency.WithLabelValues(name).Set(0)
			continue
		}
		info, err := q.inspector.GetQueueInfo(name)
		if err != nil {
			q.logger.Warn("read queue", "queue", name, "err", err)
			continue
		}
		q.m.QueueTasks.WithLabelValues(name, "pending").Set(float64(info.Pending))
		q.m.QueueTasks.WithLabelValues(name, "active").Set(float64(info.Active))
		q.m.QueueTasks.WithLabelValues(name, "scheduled").Set(float64(info.Scheduled))
		q.m.QueueTasks.WithLabelValues(name, "retry").Set(float64(info.Retry))
		q.m.QueueLatency.WithLabelValues(name).Set(info.Latency.Seconds())
	}
}
