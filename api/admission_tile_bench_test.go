package api

import (
	"context"
	"testing"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/limits"
)

// BenchmarkAdmissionTileRead is what passing a tile read through the Admission would cost per
// tile (the walk of the request by the limits, the lane's decision), against calling it
// directly: the figure behind docs/render-lanes.md, "Tile reads".
//
//	go test -tags proj,nomsgpack -vet=off ./api -run '^$' -bench AdmissionTileRead
func BenchmarkAdmissionTileRead(b *testing.B) {
	req := &gisxml.GetMapTile{MapName: "Layers", Level: 3, Row: 5, Column: 6}
	read := func() {}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			read()
		}
	})
	b.Run("admission", func(b *testing.B) {
		a := NewAdmission(limits.Request{}, HeavyLane{}, nil)
		ctx := context.Background()
		for b.Loop() {
			if err := a.Operation(ctx, "GetMapTile", req, read); err != nil {
				b.Fatal(err)
			}
		}
	})
}
