package changes_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/changes"
	"github.com/mapfarm/mapfarm/internal/testenv"
)

// setup makes a parcels table with change capture installed (cap rows) and returns its DSN.
func setup(t *testing.T, capRows int64) string {
	t.Helper()
	dsn := testenv.PostgresDB(t)
	sql, err := changes.InstallSQL(changes.Capture{Layer: "parcels", Table: "public.parcels", Geometry: "geom", Cap: capRows})
	if err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, dsn,
		`CREATE TABLE parcels (id int PRIMARY KEY, name text, geom geometry(Polygon, 3857))`,
		`CREATE TABLE roads (id int PRIMARY KEY, geom geometry(LineString, 3857))`,
		sql)
	sql, err = changes.InstallSQL(changes.Capture{Layer: "roads", Table: "roads", Geometry: "geom", Cap: capRows})
	if err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, dsn, sql)
	return dsn
}

// square is the SQL of an axis-aligned square polygon in EPSG:3857.
func square(x, y, size float64) string {
	return fmt.Sprintf("ST_MakeEnvelope(%g, %g, %g, %g, 3857)", x, y, x+size, y+size)
}

func box(x, y, size float64) orb.Bound {
	return orb.Bound{Min: orb.Point{x, y}, Max: orb.Point{x + size, y + size}}
}

func listen(t *testing.T, dsn string) *changes.Consumer {
	t.Helper()
	c, err := changes.Listen(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	c.Poll = 200 * time.Millisecond
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func next(t *testing.T, c *changes.Consumer) *changes.Batch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := c.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPostGISChangesInsertUpdateMoveDelete(t *testing.T) {
	dsn := setup(t, 0)
	c := listen(t, dsn)
	testenv.PostgresExec(t, dsn,
		`INSERT INTO parcels VALUES (1, 'a', `+square(0, 0, 10)+`), (2, 'b', `+square(100, 100, 10)+`)`,
		`UPDATE parcels SET name = 'a2' WHERE id = 1`,                   // attributes only: the same envelope
		`UPDATE parcels SET geom = `+square(500, 0, 20)+` WHERE id = 2`, // a move
		`DELETE FROM parcels WHERE id = 1`,
		`INSERT INTO roads VALUES (7, ST_GeomFromText('LINESTRING(0 0, 30 40)', 3857))`)
	b := next(t, c)
	var ops []string
	for _, ch := range b.Changes {
		ops = append(ops, ch.Layer+":"+string(ch.Op))
	}
	if want := []string{"parcels:I", "parcels:I", "parcels:U", "parcels:U", "parcels:D", "roads:I"}; !slices.Equal(ops, want) {
		t.Fatalf("changes %v, want %v", ops, want)
	}
	got := b.Dirty()
	want := []changes.Dirty{
		{Layer: "parcels", SRID: 3857, Envelopes: []orb.Bound{
			box(0, 0, 10), box(100, 100, 10), // the inserts
			box(0, 0, 10),                      // the attribute update: before = after, once
			box(100, 100, 10), box(500, 0, 20), // the move: where it was and where it went
			box(0, 0, 10), // the delete
		}},
		{Layer: "roads", SRID: 3857, Envelopes: []orb.Bound{{Min: orb.Point{0, 0}, Max: orb.Point{30, 40}}}},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("dirty\n%v\nwant\n%v", got, want)
	}
	if err := c.Ack(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if n := testenv.PostgresCount(t, dsn, "mapfarm_changes.changelog"); n != 0 {
		t.Fatalf("%d changelog rows left after the ack, want 0", n)
	}
	// Nothing waits now: Next blocks until the next commit's notification wakes it.
	done := make(chan *changes.Batch, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		b, err := c.Next(ctx)
		if err != nil {
			t.Error(err)
		}
		done <- b
	}()
	time.Sleep(300 * time.Millisecond)
	testenv.PostgresExec(t, dsn, `UPDATE roads SET geom = ST_GeomFromText('LINESTRING(1 1, 2 2)', 3857)`)
	b = <-done
	if b == nil || len(b.Changes) != 1 || b.Changes[0].Layer != "roads" || b.Changes[0].Op != 'U' {
		t.Fatalf("after the notification: %+v, want the roads update", b)
	}
}

// A consumer killed before it acknowledged, and changes made while none runs: the next
// consumer gets every one of them.
func TestPostGISChangesSurviveConsumerRestart(t *testing.T) {
	dsn := setup(t, 0)
	c := listen(t, dsn)
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (1, 'a', `+square(0, 0, 10)+`)`)
	if b := next(t, c); len(b.Changes) != 1 {
		t.Fatalf("first read: %d changes, want 1", len(b.Changes))
	}
	c.Close(context.Background()) // dies without acknowledging
	testenv.PostgresExec(t, dsn,
		`INSERT INTO parcels VALUES (2, 'b', `+square(50, 50, 10)+`)`,
		`DELETE FROM parcels WHERE id = 1`)
	// A transaction rolled back records nothing.
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := conn.Begin(context.Background())
	if _, err := tx.Exec(context.Background(), `INSERT INTO parcels VALUES (3, 'c', `+square(9, 9, 1)+`)`); err != nil {
		t.Fatal(err)
	}
	tx.Rollback(context.Background())
	conn.Close(context.Background())

	c2 := listen(t, dsn)
	b := next(t, c2)
	got := b.Dirty()
	want := []changes.Dirty{{Layer: "parcels", SRID: 3857, Envelopes: []orb.Bound{box(0, 0, 10), box(50, 50, 10), box(0, 0, 10)}}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after restart\n%v\nwant\n%v", got, want)
	}
	if err := c2.Ack(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	c2.Close(context.Background())
	c3 := listen(t, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if b, err := c3.Next(ctx); err == nil {
		t.Fatalf("acknowledged changes came back: %+v", b)
	}
}

// Past the cap the changelog stops growing and the layer is marked wholly dirty; acknowledging
// the mark frees the room.
func TestPostGISChangesCap(t *testing.T) {
	dsn := setup(t, 5)
	for i := range 40 {
		testenv.PostgresExec(t, dsn, fmt.Sprintf(`INSERT INTO parcels VALUES (%d, 'x', %s)`, i, square(float64(i), 0, 1)))
	}
	testenv.PostgresExec(t, dsn, `INSERT INTO roads VALUES (1, ST_GeomFromText('LINESTRING(0 0, 1 1)', 3857))`)
	if n := testenv.PostgresCount(t, dsn, "mapfarm_changes.changelog"); n > 5 {
		t.Fatalf("changelog holds %d rows past a cap of 5", n)
	}
	c := listen(t, dsn)
	b := next(t, c)
	if !slices.Equal(b.Whole, []string{"parcels", "roads"}) {
		t.Fatalf("wholly dirty layers %v, want [parcels roads]", b.Whole)
	}
	for _, d := range b.Dirty() {
		if !d.Whole || len(d.Envelopes) != 0 {
			t.Fatalf("layer %s: %+v, want whole", d.Layer, d)
		}
	}
	if err := c.Ack(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if n := testenv.PostgresCount(t, dsn, "mapfarm_changes.changelog") + testenv.PostgresCount(t, dsn, "mapfarm_changes.overflow"); n != 0 {
		t.Fatalf("%d rows left after the ack, want 0", n)
	}
	// Room again: the next edit is recorded as an envelope.
	testenv.PostgresExec(t, dsn, `UPDATE parcels SET name = 'y' WHERE id = 3`)
	b = next(t, c)
	if got := b.Dirty(); len(got) != 1 || got[0].Whole || len(got[0].Envelopes) != 1 || got[0].Envelopes[0] != box(3, 0, 1) {
		t.Fatalf("after the ack: %+v, want the one envelope", got)
	}
	// TRUNCATE fires no row trigger: the layer is wholly dirty.
	testenv.PostgresExec(t, dsn, `TRUNCATE roads`)
	b = next(t, c)
	if !slices.Equal(b.Whole, []string{"roads"}) {
		t.Fatalf("after TRUNCATE: whole %v, want [roads]", b.Whole)
	}
}

func TestInstallSQLRefusesOddLayers(t *testing.T) {
	for _, layer := range []string{"", "a'b", "x$$y", "-a", "a b"} {
		if _, err := changes.InstallSQL(changes.Capture{Layer: layer, Table: "t", Geometry: "g"}); err == nil {
			t.Errorf("layer %q accepted", layer)
		}
	}
	if _, err := changes.InstallSQL(changes.Capture{Layer: "p", Table: "t", Geometry: "g$mapfarm$; DROP TABLE t; --"}); err == nil {
		t.Error("a geometry column that ends the function body was accepted")
	}
	sql, err := changes.InstallSQL(changes.Capture{Layer: "p", Table: `odd"name`, Geometry: `g$$"`})
	if err != nil {
		t.Fatal(err)
	}
	if !contains(sql, `ON "odd""name"`) || !contains(sql, `OLD."g$$"""`) {
		t.Fatalf("identifiers not quoted:\n%s", sql)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// A transaction that took its changelog id before another but commits after it is not skipped:
// consumed rows are deleted one by one, never passed over by an id cursor.
func TestPostGISChangesLateCommitNotLost(t *testing.T) {
	dsn := setup(t, 0)
	ctx := context.Background()
	slow, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer slow.Close(ctx)
	tx, err := slow.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO parcels VALUES (1, 'slow', `+square(0, 0, 1)+`)`); err != nil {
		t.Fatal(err)
	}
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (2, 'fast', `+square(50, 0, 1)+`)`)
	c := listen(t, dsn)
	b := next(t, c)
	if len(b.Changes) != 1 || b.Changes[0].New != box(50, 0, 1) {
		t.Fatalf("first read: %+v, want the fast insert", b.Changes)
	}
	if err := c.Ack(ctx, b); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	b = next(t, c)
	if len(b.Changes) != 1 || b.Changes[0].New != box(0, 0, 1) || b.Changes[0].ID >= 2 {
		t.Fatalf("after the late commit: %+v, want the slow insert with the lower id", b.Changes)
	}
}

// A change made past the cap while a batch holding the layer's marker is in hand keeps the
// layer marked after that batch is acknowledged.
func TestPostGISChangesMarkerMovedWhileInHand(t *testing.T) {
	dsn := setup(t, 2)
	for i := range 4 {
		testenv.PostgresExec(t, dsn, fmt.Sprintf(`INSERT INTO parcels VALUES (%d, 'x', %s)`, i, square(float64(i), 0, 1)))
	}
	c := listen(t, dsn)
	b := next(t, c)
	if !slices.Equal(b.Whole, []string{"parcels"}) {
		t.Fatalf("whole %v, want [parcels]", b.Whole)
	}
	testenv.PostgresExec(t, dsn, `UPDATE parcels SET name = 'moved on' WHERE id = 0`)
	if err := c.Ack(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	b = next(t, c)
	if !slices.Equal(b.Whole, []string{"parcels"}) {
		t.Fatalf("after the ack: whole %v, want parcels still marked", b.Whole)
	}
	if err := c.Ack(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	if n := testenv.PostgresCount(t, dsn, "mapfarm_changes.overflow"); n != 0 {
		t.Fatalf("%d markers after the second ack, want 0", n)
	}
}

// Run acknowledges only what its handler took: a failed hand-over comes back.
func TestConsumerRunRetriesAFailedHandOver(t *testing.T) {
	dsn := setup(t, 0)
	c := listen(t, dsn)
	testenv.PostgresExec(t, dsn, `INSERT INTO parcels VALUES (1, 'a', `+square(0, 0, 10)+`)`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var calls int
	var got []changes.Dirty
	err := c.Run(ctx, 10*time.Millisecond, func(_ context.Context, d []changes.Dirty) error {
		calls++
		if calls == 1 {
			return fmt.Errorf("queue down")
		}
		got = d
		cancel()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || len(got) != 1 || len(got[0].Envelopes) != 1 || got[0].Envelopes[0] != box(0, 0, 10) {
		t.Fatalf("%d calls, last %+v; want 2 and the insert", calls, got)
	}
}
