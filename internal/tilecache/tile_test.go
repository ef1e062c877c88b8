package tilecache_test

import (
	"errors"
	"testing"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

func TestParseTile(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    tilecache.Tile
		wantErr bool
	}{
		{name: "origin", in: "0/0/0", want: tilecache.Tile{}},
		{name: "typical", in: "5/12/9", want: tilecache.Tile{Level: 5, Row: 12, Col: 9}},
		{name: "max", in: "99/2147483647/2147483647", want: tilecache.Tile{Level: 99, Row: 2147483647, Col: 2147483647}},
		{name: "leading zeros", in: "05/012/9", want: tilecache.Tile{Level: 5, Row: 12, Col: 9}},
		{name: "level too high", in: "100/0/0", wantErr: true},
		{name: "row too high", in: "3/2147483648/0", wantErr: true},
		{name: "negative", in: "3/-1/0", wantErr: true},
		{name: "plus sign", in: "3/+1/0", wantErr: true},
		{name: "two parts", in: "3/1", wantErr: true},
		{name: "four parts", in: "3/1/2/3", wantErr: true},
		{name: "empty part", in: "3//2", wantErr: true},
		{name: "hex", in: "3/0x1/2", wantErr: true},
		{name: "space", in: "3/ 1/2", wantErr: true},
		{name: "empty", in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tilecache.ParseTile(tt.in)
			if tt.wantErr {
				if !errors.Is(err, tilecache.ErrInvalidTile) {
					t.Fatalf("ParseTile(%q) error = %v, want ErrInvalidTile", tt.in, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseTile(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestTileStringRoundTrip(t *testing.T) {
	for level := 0; level <= tilecache.MaxLevel; level += 7 {
		for _, rc := range [][2]int{{0, 0}, {1, 2}, {127, 128}, {123456, 654321}, {tilecache.MaxIndex, 0}} {
			tile := tilecache.Tile{Level: level, Row: rc[0], Col: rc[1]}
			got, err := tilecache.ParseTile(tile.String())
			if err != nil || got != tile {
				t.Fatalf("ParseTile(%q) = %v, %v; want %v", tile.String(), got, err, tile)
			}
		}
	}
}

func TestBundleOf(t *testing.T) {
	tests := []struct {
		tile     tilecache.Tile
		wantName string
		wantTL   tilecache.Tile
	}{
		{tilecache.Tile{Level: 1, Row: 0, Col: 0}, "R0000C0000", tilecache.Tile{Level: 1}},
		{tilecache.Tile{Level: 8, Row: 130, Col: 5}, "R0080C0000", tilecache.Tile{Level: 8, Row: 128}},
		{tilecache.Tile{Level: 20, Row: 500000, Col: 1048575}, "R7a100Cfff80", tilecache.Tile{Level: 20, Row: 499968, Col: 1048448}},
	}
	for _, tt := range tests {
		b := tilecache.BundleOf(tt.tile)
		if b.Name() != tt.wantName || b.TopLeft != tt.wantTL || !b.Contains(tt.tile) || !b.Valid() {
			t.Errorf("BundleOf(%v) = %v (%s), want top-left %v, name %s", tt.tile, b.TopLeft, b.Name(), tt.wantTL, tt.wantName)
		}
	}
}

func TestMetatileOf(t *testing.T) {
	m, err := tilecache.MetatileOf(tilecache.Tile{Level: 3, Row: 5, Col: 7}, 4)
	if err != nil {
		t.Fatal(err)
	}
	want := tilecache.Metatile{TopLeft: tilecache.Tile{Level: 3, Row: 4, Col: 4}, Rows: 4, Cols: 4}
	if m != want {
		t.Fatalf("MetatileOf = %v, want %v", m, want)
	}
	n := 0
	for tile := range m.Tiles() {
		if !m.Contains(tile) || m.Bundle() != tilecache.BundleOf(tile) {
			t.Fatalf("tile %v of %v misplaced", tile, m)
		}
		n++
	}
	if n != 16 {
		t.Fatalf("metatile has %d tiles, want 16", n)
	}
	for _, bad := range []int{0, 3, 6, 256, -4} {
		if _, err := tilecache.MetatileOf(tilecache.Tile{}, bad); !errors.Is(err, tilecache.ErrMetatileSize) {
			t.Errorf("MetatileOf(size %d) error = %v, want ErrMetatileSize", bad, err)
		}
	}
}
