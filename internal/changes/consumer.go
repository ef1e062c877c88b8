package changes

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paulmach/orb"
)

// Dirty is what changed in one layer: envelopes in the layer's spatial reference (before and
// after each change), or the whole layer.
type Dirty struct {
	Layer string
	// SRID is the envelopes' SRID (PostGIS; 0 where unknown).
	SRID      int
	Envelopes []orb.Bound
	// Whole means every tile of the layer is dirty (a changelog past its cap, a TRUNCATE, a
	// replaced GeoJSON file); Envelopes is then empty.
	Whole bool
}

// Change is one row of the PostGIS changelog.
type Change struct {
	ID    int64
	Layer string
	// Op is 'I', 'U' or 'D'.
	Op byte
	// Old and New are the envelopes before and after the change; HasOld and HasNew say
	// whether there is one (no geometry before an insert, after a delete, or a NULL one).
	Old, New       orb.Bound
	HasOld, HasNew bool
	SRID           int
	At             time.Time
}

// overflowMark is a layer's overflow marker as read; hits tells a marker moved since.
type overflowMark struct {
	layer string
	hits  int64
}

// Batch is what one [Consumer.Next] read: changelog rows and wholly dirty layers. Nothing in it
// is consumed until [Consumer.Ack].
type Batch struct {
	Changes []Change
	// Whole lists the layers marked wholly dirty (past the cap or truncated).
	Whole    []string
	overflow []overflowMark
}

// Empty reports whether the batch holds nothing.
func (b *Batch) Empty() bool { return len(b.Changes) == 0 && len(b.overflow) == 0 }

// Dirty groups the batch by layer, in layer order: every envelope before and after a change,
// or Whole for a marked layer.
func (b *Batch) Dirty() []Dirty {
	byLayer := map[string]*Dirty{}
	get := func(layer string) *Dirty {
		d := byLayer[layer]
		if d == nil {
			d = &Dirty{Layer: layer}
			byLayer[layer] = d
		}
		return d
	}
	for _, l := range b.Whole {
		get(l).Whole = true
	}
	for _, c := range b.Changes {
		d := get(c.Layer)
		if d.Whole {
			continue
		}
		if c.SRID != 0 {
			d.SRID = c.SRID
		}
		if c.HasOld {
			d.Envelopes = append(d.Envelopes, c.Old)
		}
		if c.HasNew && !(c.HasOld && c.New == c.Old) {
			d.Envelopes = append(d.Envelopes, c.New)
		}
	}
	out := make([]Dirty, 0, len(byLayer))
	for _, d := range byLayer {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b Dirty) int {
		switch {
		case a.Layer < b.Layer:
			return -1
		case a.Layer > b.Layer:
			return 1
		}
		return 0
	})
	return out
}

// Consumer reads a PostGIS changelog: it LISTENs on [Channel], reads what is waiting, and
// removes it only when the caller acknowledges it, so a consumer that dies between reading and
// acknowledging loses nothing (the next one reads the same rows again). One consumer per
// database: two would hand out the same rows.
type Consumer struct {
	conn *pgx.Conn
	// BatchRows is the most changelog rows one Next returns (default 10000).
	BatchRows int
	// Poll is how long Next waits for a notification before looking anyway (default 30 s):
	// a safety net for a notification lost with a dropped connection.
	Poll time.Duration
	Log  *slog.Logger
}

// Listen connects to dsn and LISTENs on [Channel]. Close the consumer when done.
func Listen(ctx context.Context, dsn string) (*Consumer, error) { return ListenAs(ctx, dsn, "") }

// ListenAs is Listen with a password kept apart from the DSN (a connection's passwordEnv or
// passwordFile); an empty password leaves the DSN's (or libpq's PGPASSWORD) in place.
func ListenAs(ctx context.Context, dsn, password string) (*Consumer, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("changes: connection string: %w", err)
	}
	if password != "" {
		cfg.Password = password
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("changes: connect: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+Channel); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("changes: listen: %w", err)
	}
	return &Consumer{conn: conn, BatchRows: 10000, Poll: 30 * time.Second, Log: slog.Default()}, nil
}

// Installed reports whether the database has the changelog (`mapfarm changes install`).
func (c *Consumer) Installed(ctx context.Context) (bool, error) {
	var ok bool
	if err := c.conn.QueryRow(ctx, `SELECT to_regclass('mapfarm_changes.changelog') IS NOT NULL`).Scan(&ok); err != nil {
		return false, fmt.Errorf("changes: look for the changelog: %w", err)
	}
	return ok, nil
}

// Close closes the connection; unacknowledged rows stay for the next consumer.
func (c *Consumer) Close(ctx context.Context) error { return c.conn.Close(ctx) }

// Next returns the next batch of waiting changes. With none waiting it blocks until a
// notification arrives, Poll passes or ctx ends.
func (c *Consumer) Next(ctx context.Context) (*Batch, error) {
	for {
		b, err := c.read(ctx)
		if err != nil || !b.Empty() {
			return b, err
		}
		wait, cancel := context.WithTimeout(ctx, c.Poll)
		n, err := c.conn.WaitForNotification(wait)
		cancel()
		switch {
		case err == nil:
			c.Log.DebugContext(ctx, "changes: notified", "layer", n.Payload)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			// Poll passed: look again.
		default:
			return nil, fmt.Errorf("changes: wait for notification: %w", err)
		}
	}
}

// read reads what is waiting, oldest first, without consuming it.
func (c *Consumer) read(ctx context.Context) (*Batch, error) {
	b := &Batch{}
	rows, err := c.conn.Query(ctx, `SELECT layer, hits FROM mapfarm_changes.overflow ORDER BY layer`)
	if err != nil {
		return nil, fmt.Errorf("changes: read overflow markers: %w", err)
	}
	for rows.Next() {
		var m overflowMark
		if err := rows.Scan(&m.layer, &m.hits); err != nil {
			rows.Close()
			return nil, fmt.Errorf("changes: read overflow markers: %w", err)
		}
		b.overflow = append(b.overflow, m)
		b.Whole = append(b.Whole, m.layer)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes: read overflow markers: %w", err)
	}
	rows, err = c.conn.Query(ctx, `SELECT id, layer, op, changed_at,
		ST_XMin(old_env), ST_YMin(old_env), ST_XMax(old_env), ST_YMax(old_env),
		ST_XMin(new_env), ST_YMin(new_env), ST_XMax(new_env), ST_YMax(new_env),
		COALESCE(ST_SRID(new_env), ST_SRID(old_env), 0)
		FROM mapfarm_changes.changelog ORDER BY id LIMIT $1`, max(1, c.BatchRows))
	if err != nil {
		return nil, fmt.Errorf("changes: read changelog: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var ch Change
		var op string
		var o, n [4]*float64
		if err := rows.Scan(&ch.ID, &ch.Layer, &op, &ch.At, &o[0], &o[1], &o[2], &o[3], &n[0], &n[1], &n[2], &n[3], &ch.SRID); err != nil {
			return nil, fmt.Errorf("changes: read changelog: %w", err)
		}
		ch.Op = op[0]
		ch.Old, ch.HasOld = bound(o)
		ch.New, ch.HasNew = bound(n)
		b.Changes = append(b.Changes, ch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes: read changelog: %w", err)
	}
	return b, nil
}

// bound makes a bound of four nullable numbers (NULL for no geometry or an empty one).
func bound(v [4]*float64) (orb.Bound, bool) {
	for _, p := range v {
		if p == nil {
			return orb.Bound{}, false
		}
	}
	return orb.Bound{Min: orb.Point{*v[0], *v[1]}, Max: orb.Point{*v[2], *v[3]}}, true
}

// Ack consumes a batch, in one transaction: its changelog rows are deleted, and so are its
// overflow markers unless they moved since they were read (a change made past the cap while
// the batch was in hand keeps its layer marked). Then the cursor's low water moves up to the
// oldest row still waiting, which frees room under the cap. Call it once the batch's dirty
// tiles are safely handed on.
func (c *Consumer) Ack(ctx context.Context, b *Batch) error {
	ids := make([]int64, len(b.Changes))
	for i, ch := range b.Changes {
		ids[i] = ch.ID
	}
	err := pgx.BeginFunc(ctx, c.conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM mapfarm_changes.changelog WHERE id = ANY($1)`, ids); err != nil {
			return err
		}
		for _, m := range b.overflow {
			if _, err := tx.Exec(ctx, `DELETE FROM mapfarm_changes.overflow WHERE layer = $1 AND hits = $2`, m.layer, m.hits); err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE mapfarm_changes.cursor SET acked_at = now(),
			low_water = COALESCE((SELECT min(id) - 1 FROM mapfarm_changes.changelog),
			                     (SELECT last_value FROM mapfarm_changes.changelog_id_seq))`)
		return err
	})
	if err != nil {
		return fmt.Errorf("changes: acknowledge %d changes: %w", len(ids), err)
	}
	return nil
}

// boundTransformer is what In needs of a proj.Transformer.
type boundTransformer interface {
	Bound(orb.Bound) (orb.Bound, error)
}

// In returns d with its envelopes in another spatial reference (a cache's tiling scheme's):
// each is the bound of a grid of points over the envelope carried across, so a curved edge's
// extreme is kept. A whole layer stays whole.
func (d Dirty) In(t boundTransformer) (Dirty, error) {
	out := Dirty{Layer: d.Layer, Whole: d.Whole, Envelopes: make([]orb.Bound, 0, len(d.Envelopes))}
	for _, e := range d.Envelopes {
		b, err := t.Bound(e)
		if err != nil {
			return Dirty{}, fmt.Errorf("changes: envelope %v of layer %s: %w", e, d.Layer, err)
		}
		out.Envelopes = append(out.Envelopes, b)
	}
	return out, nil
}

// Run hands every batch's dirty layers to handle and acknowledges the batch once handle
// returns nil; a batch handle fails is not acknowledged and is handed again after retry. It
// returns when ctx ends, or with the first error of the database (the caller reconnects).
func (c *Consumer) Run(ctx context.Context, retry time.Duration, handle func(context.Context, []Dirty) error) error {
	for {
		b, err := c.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if err := handle(ctx, b.Dirty()); err != nil {
			c.Log.WarnContext(ctx, "changes: dirty layers not handed on; trying again", "err", err, "changes", len(b.Changes), "retry", retry)
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(retry):
			}
			continue
		}
		if err := c.Ack(ctx, b); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}
}
