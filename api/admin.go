package api

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/mapfarm/mapfarm/internal/limits"
	"github.com/mapfarm/mapfarm/internal/metrics"
	"github.com/mapfarm/mapfarm/internal/refresh"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/token"
)

// SeedJobs is what the admin endpoints need of seeding jobs (a *seed.Admin).
type SeedJobs interface {
	Submit(ctx context.Context, r seed.Request) (seed.Status, error)
	Status(ctx context.Context, id string) (seed.Status, error)
	Cancel(ctx context.Context, id string) (seed.Status, error)
	List(ctx context.Context, limit int) ([]seed.Status, error)
}

// RefreshAdmin is what the admin endpoints need of the refresh of caches (a *refresh.Admin).
type RefreshAdmin interface {
	Expire(ctx context.Context, r refresh.ExpireRequest) (refresh.ExpireResult, error)
	Pending(ctx context.Context) ([]refresh.Waiting, error)
}

// refreshHandler serves the admin API of cache refresh (docs/freshness.md), under the same
// credentials and checks as the seeding jobs':
//
//	POST /admin/expire    record an expire (refresh.ExpireRequest); 202 with what was recorded
//	GET  /admin/refresh   every cache's refresh backlog: dirty areas waiting and their age
type refreshHandler struct {
	admin RefreshAdmin
	jobs  *adminHandler // for fail
}

func (h *refreshHandler) expire(c *gin.Context) {
	var r refresh.ExpireRequest
	if err := jsonDecoder(c).Decode(&r); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "expire request: " + err.Error()})
		return
	}
	if g, ok := c.Get(grantKey); ok && !g.(token.Grant).Allows(r.Service) {
		c.JSON(http.StatusForbidden, gin.H{"error": "this token does not cover service " + strconv.Quote(r.Service)})
		return
	}
	res, err := h.admin.Expire(c.Request.Context(), r)
	if err != nil {
		h.jobs.fail(c, err)
		return
	}
	c.JSON(http.StatusAccepted, res)
}

func (h *refreshHandler) pending(c *gin.Context) {
	ws, err := h.admin.Pending(c.Request.Context())
	if err != nil {
		h.jobs.fail(c, err)
		return
	}
	if ws == nil {
		ws = []refresh.Waiting{}
	}
	c.JSON(http.StatusOK, gin.H{"backlog": ws})
}

// adminHandler serves the coordinator's JSON API for seeding jobs. The api only stores the
// request in Redis; the coordinator picks it up on its next pass.
//
//	POST   /admin/seed        create a job from a seed.Request; 201 with its status
//	GET    /admin/seed        the latest jobs (?limit=, default 50)
//	GET    /admin/seed/<job>  a job's status: state, done, failed, total, rate, ETA
//	DELETE /admin/seed/<job>  cancel a job; 200 with its status
//
// Job ids are 1 to 128 letters, digits, '.', '_' and '-', starting with a letter or digit
// (seed.ValidID): a longer or odd id is refused with 400 at creation and names no job (404)
// afterwards.
//
// The admin routes are never anonymous (Server.authenticateAdmin): they take the admin token
// (configured, or made at start and kept in the state directory; internal/admincred), or a
// token of role admin, whose service scope also bounds the jobs it may submit; and they refuse
// cross-site, forwarded and unknown-Host requests whatever the credential (admin_trust.go).
//
// An error of the job store (Redis down, a failover) answers 500 with the request id and
// nothing of its cause, which may name addresses; the cause is logged at ERROR with that id.
type adminHandler struct {
	jobs    SeedJobs
	metrics *metrics.Metrics // counts the ids refused for their length; nil: none
	logger  *slog.Logger
}

func (h *adminHandler) fail(c *gin.Context, err error) {
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, seed.ErrBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, seed.ErrNoJob):
		code = http.StatusNotFound
	case errors.Is(err, seed.ErrJobExists):
		code = http.StatusConflict
	}
	if code == http.StatusInternalServerError {
		id := requestIDOf(c)
		h.logger.Error("admin request failed", "request_id", id, "method", c.Request.Method, "path", c.Request.URL.Path, "err", err)
		c.JSON(code, gin.H{"error": "the server failed; its log names the cause with request id " + id})
		return
	}
	c.JSON(code, gin.H{"error": err.Error()})
}

func (h *adminHandler) submit(c *gin.Context) {
	var r seed.Request
	dec := jsonDecoder(c)
	if err := dec.Decode(&r); err != nil {
		c.JSON(http.StatusBadRequest, gin.H{"error": "seed request: " + err.Error()})
		return
	}
	if r.ID != "" {
		if err := seed.ValidID(r.ID); err != nil {
			if len(r.ID) > seed.MaxIDLen {
				h.metrics.Refused(&limits.Error{Limit: limits.SeedID, Msg: err.Error()})
			}
			h.fail(c, err)
			return
		}
	}
	if g, ok := c.Get(grantKey); ok && !g.(token.Grant).Allows(r.Service) {
		c.JSON(http.StatusForbidden, gin.H{"error": "this token does not cover service " + strconv.Quote(r.Service)})
		return
	}
	st, err := h.jobs.Submit(c.Request.Context(), r)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusCreated, st)
}

func (h *adminHandler) list(c *gin.Context) {
	limit, _ := strconv.Atoi(c.DefaultQuery("limit", "50"))
	jobs, err := h.jobs.List(c.Request.Context(), min(max(limit, 1), 1000))
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, gin.H{"jobs": jobs})
}

func (h *adminHandler) status(c *gin.Context) { h.onJob(c, h.jobs.Status) }

func (h *adminHandler) cancel(c *gin.Context) { h.onJob(c, h.jobs.Cancel) }

// onJob applies do to the job the path names and answers with the job's status.
func (h *adminHandler) onJob(c *gin.Context, do func(ctx context.Context, id string) (seed.Status, error)) {
	id := c.Param("job")
	if seed.ValidID(id) != nil {
		h.fail(c, seed.ErrNoJob)
		return
	}
	st, err := do(c.Request.Context(), id)
	if err != nil {
		h.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, st)
}

// jsonDecoder reads a request body of at most 1 MiB, refusing unknown fields.
func jsonDecoder(c *gin.Context) *json.Decoder {
	dec := json.NewDecoder(io.LimitReader(c.Request.Body, 1<<20))
	dec.DisallowUnknownFields()
	return dec
}
