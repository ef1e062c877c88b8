package coordinator

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/hibiken/asynq"

	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/seed"
)

// queueStats publishes the asynq queues' sizes and latencies as metrics: what worker
// autoscaling reads.
type queueStats struct {
	inspector *asynq.Inspector
	queues    []string
	jobs      *seed.Jobs // seeding progress, published with the queues
	m         *metrics.Metrics
	logger    *slog.Logger
}

// recentJobs is how many of the newest seeding jobs publish their progress.
const recentJobs = 20

// exec reads every queue, and the progress of the newest seeding jobs, once. A queue nobody has
// used yet does not exist in Redis: it counts as empty.
func (q *queueStats) exec() {
	q.seedProgress()
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

// seedProgress publishes done, failed and total tiles of the newest seeding jobs.
func (q *queueStats) seedProgress() {
	if q.jobs == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ids, err := q.jobs.List(ctx, recentJobs)
	if err != nil {
		q.logger.Warn("list seeding jobs", "err", err)
		return
	}
	q.m.SeedTiles.Reset()
	for _, id := range ids {
		st, err := q.jobs.Status(ctx, id)
		if err != nil {
			continue
		}
		q.m.SeedTiles.WithLabelValues(id, "done").Set(float64(st.Done))
		q.m.SeedTiles.WithLabelValues(id, "failed").Set(float64(st.Failed))
		q.m.SeedTiles.WithLabelValues(id, "total").Set(float64(st.Total))
	}
}
