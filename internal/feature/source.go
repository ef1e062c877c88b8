package feature

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Source is one layer's or table's data where it lives: a GeoPackage table
// (package feature/gpkg), a PostGIS table or view (feature/postgis), or a
// small in-memory Layer (GeoJSON files). Every map operation, every draw and
// every seed reads features through it; no caller needs a whole layer in
// memory.
//
// A Source answers a Query with exact semantics whatever it can push down:
// a provider translates to SQL what it can (an envelope to its spatial
// index, a where clause to parameterised SQL, counts and statistics to
// aggregates) and finishes the rest in Go with the helpers of this package
// (Query.Matcher, Aggregate, SortPage), so two providers over the same rows
// give the same answer.
//
// Every method honours its context: a cancelled or expired context stops
// the scan and the method returns an error wrapping ctx.Err(). Sources are
// safe for concurrent use.
type Source interface {
	// Info describes the source: its schema, read once when the source
	// was opened. It does no I/O.
	Info() Info
	// Scan calls fn for each feature q selects, in q's order (Order, then
	// ID ascending; any order when q.AnyOrder), after q.Offset and at most
	// q.Limit of them. fn may keep the Feature but must not modify it; an
	// error from fn stops the scan and is returned as it is.
	Scan(ctx context.Context, q *Query, fn func(*Feature) error) error
	// Count returns how many features q selects (Offset and Limit apply).
	Count(ctx context.Context, q *Query) (int, error)
	// Extent returns the union of the bounds of the features q selects
	// (EmptyBound when none has a geometry).
	Extent(ctx context.Context, q *Query) (orb.Bound, error)
	// Stats computes stats over the features q selects, grouped by the
	// columns groupBy (positions in Info().Fields; none: one group). Rows
	// come in ascending order of their group values. NULLs are skipped
	// (Count counts non-NULL values); StdDev and Variance are the sample
	// ones (n−1), NULL for fewer than two values. With no group and no
	// feature, one row of NULL results (Count 0) is returned.
	Stats(ctx context.Context, q *Query, stats []Stat, groupBy []int) ([]StatRow, error)
	// Distinct returns the distinct tuples of the columns cols (positions
	// in Info().Fields) among the features q selects, sorted ascending
	// (NULL first), each tuple once.
	Distinct(ctx context.Context, q *Query, cols []int) ([][]any, error)
	// Ping reports whether the source can answer now; /readyz asks it.
	Ping(ctx context.Context) error
}

// Info describes a Source.
type Info struct {
	// Name names the source in messages and faults, e.g.
	// "geopackage world.gpkg table countries" or "postgis parcels".
	Name string
	// Table is the table (or view) name as stored.
	Table string
	// SR is the spatial reference of the geometries Scan returns.
	SR proj.SR
	// GeometryType is the layer's geometry type (None for a table).
	GeometryType GeometryType
	// Fields are the attribute columns; Feature.Values align with them.
	// The object-ID field, if any, has type FieldOID.
	Fields []Field
	// Extent is the data's extent as known when the source was opened
	// (from metadata or the spatial index; EmptyBound when unknown or no
	// geometry).
	Extent orb.Bound
	// AvgPoints is the average number of vertices per geometry (from a
	// sample; 0 when unknown).
	AvgPoints int
}

// FieldIndex returns the position of the named field in Fields
// (case-insensitive), or -1.
func (in Info) FieldIndex(name string) int { return fieldIndex(in.Fields, name) }

// Query selects features from a Source. The zero Query selects every
// feature, with every non-BLOB column and the geometry, ordered by ID.
type Query struct {
	// Bound, when not nil, keeps the features whose bounding box
	// intersects it (edges touching count). It is in the source's SR.
	Bound *orb.Bound
	// Spatial, when not nil, keeps the features that have an exact
	// spatial relation with a geometry (in the source's SR).
	Spatial *Spatial
	// Where, when not nil and not empty, keeps the features for which the
	// clause is TRUE. Field names resolve against Info().Fields.
	Where *where.Expr
	// IDs, when not nil, keeps only the features with these object IDs
	// (an empty, non-nil slice selects nothing).
	IDs []int64
	// Columns lists the attribute columns to read (positions in
	// Info().Fields). Nil reads every column except BLOBs; a BLOB is read
	// only when listed. Feature.Values always has len(Info().Fields)
	// entries; a column not read may be nil there (a provider that holds
	// the row in memory may fill it anyway).
	Columns []int
	// NoGeometry leaves Feature.Geom nil (Bound is still set when the
	// provider has it cheaply; callers must not rely on it).
	NoGeometry bool
	// Order sorts the result; ties (and a nil Order) go by ID ascending.
	Order []Order
	// AnyOrder lets the provider return features in any order (faster
	// where a sort is not free). Offset and Limit then make no sense and
	// must be zero.
	AnyOrder bool
	// Offset skips that many features of the ordered result.
	Offset int
	// Limit returns at most that many features; 0 means no limit.
	Limit int
	// Resolution, when > 0, is the size of a pixel of the picture the scan
	// is drawn into, in the source's units: a hint that only draws give. A
	// provider may then return each geometry with its vertices snapped to
	// the grid of GridFor(Resolution) (a thousandth of a pixel or finer) and
	// repeated vertices dropped, as a database does cheaply before sending
	// it (fewer bytes to read and decode); Feature.Bound is then the snapped
	// geometry's. A provider that cannot push it down ignores it, and so
	// must every query that needs exact geometries.
	Resolution float64
	// MaxGroups bounds the groups Stats computes: a selection with more
	// groups fails with ErrTooManyGroups as soon as the source has seen
	// the group past the bound (a database is asked for one more group
	// than MaxGroups, no more). 0 means no bound.
	MaxGroups int
}

// ReadColumns returns the positions in fields of the attribute columns q reads: q.Columns, or
// where that is nil every column but the BLOBs. The slice is the caller's.
func (q *Query) ReadColumns(fields []Field) []int {
	if q.Columns != nil {
		return slices.Clone(q.Columns)
	}
	var cols []int
	for i, f := range fields {
		if f.Type != FieldBlob {
			cols = append(cols, i)
		}
	}
	return cols
}

// Order is one ORDER BY term.
type Order struct {
	// Column is a position in Info().Fields.
	Column int
	// Desc sorts descending.
	Desc bool
}

// StatKind is an aggregate Source.Stats computes.
type StatKind int

// Statistic kinds.
const (
	StatCount StatKind = iota
	StatSum
	StatMin
	StatMax
	StatAvg
	StatStdDev
	StatVariance
)

// Stat is one aggregate of one column.
type Stat struct {
	Kind StatKind
	// Column is a position in Info().Fields. Sum, Avg, StdDev and Variance
	// need a numeric column; Count, Min and Max take any.
	Column int
}

// StatRow is one group of a Stats result.
type StatRow struct {
	// Group holds the group's values, one per groupBy column.
	Group []any
	// Values holds one result per Stat: int64 for Count, float64 for Sum,
	// Avg, StdDev and Variance (nil when undefined), the column's own type
	// for Min and Max (nil when no value).
	Values []any
}

// ErrTooManyGroups is the error of a Stats call whose selection has more
// groups than its Query.MaxGroups. The caller names the limit.
var ErrTooManyGroups = errors.New("more groups than the query allows")

// ErrUnavailable marks an error of a source that cannot be reached now
// (a database down, a file missing): the request may succeed later. Wrap
// it with the source's name: fmt.Errorf("%s: %w: %v", name, ErrUnavailable, err).
var ErrUnavailable = errors.New("data source unavailable")

// ErrQuery marks a query the source refuses as malformed (a column that
// does not exist, a type mismatch found by the database). It is the
// caller's fault, not the source's.
var ErrQuery = errors.New("bad query")

// Unavailable wraps err as an ErrUnavailable of the named source.
func Unavailable(source string, err error) error {
	return fmt.Errorf("%s: %w: %w", source, ErrUnavailable, err)
}
