package seed

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// ErrBadStaging is wrapped by errors for a staging object that cannot be read.
var ErrBadStaging = errors.New("seed: corrupt staging part")

// stagingMagic starts every staging object.
const stagingMagic = "MFSP1\n"

// Change is one tile of a staged part: new bytes, or (Data nil) a deletion.
type Change struct {
	Tile tilecache.Tile
	Data []byte
}

// EncodeStaging returns the staging object of a part: the magic, then per change u32 row,
// u32 col, u32 length and the bytes (length 0: delete the tile), little-endian, in the given
// order. The bytes depend only on the changes.
func EncodeStaging(changes []Change) []byte {
	n := len(stagingMagic)
	for _, c := range changes {
		n += 12 + len(c.Data)
	}
	b := make([]byte, 0, n)
	b = append(b, stagingMagic...)
	for _, c := range changes {
		b = binary.LittleEndian.AppendUint32(b, uint32(c.Tile.Row))
		b = binary.LittleEndian.AppendUint32(b, uint32(c.Tile.Col))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(c.Data)))
		b = append(b, c.Data...)
	}
	return b
}

// DecodeStaging reads a staging object of a part at level. The slices share memory with b.
func DecodeStaging(level int, b []byte) ([]Change, error) {
	if len(b) < len(stagingMagic) || string(b[:len(stagingMagic)]) != stagingMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrBadStaging)
	}
	b = b[len(stagingMagic):]
	var out []Change
	for len(b) > 0 {
		if len(b) < 12 {
			return nil, fmt.Errorf("%w: truncated record", ErrBadStaging)
		}
		row, col, n := binary.LittleEndian.Uint32(b), binary.LittleEndian.Uint32(b[4:]), binary.LittleEndian.Uint32(b[8:])
		b = b[12:]
		if uint64(n) > uint64(len(b)) {
			return nil, fmt.Errorf("%w: record of %d bytes, %d left", ErrBadStaging, n, len(b))
		}
		c := Change{Tile: tilecache.Tile{Level: level, Row: int(row), Col: int(col)}}
		if n > 0 {
			c.Data = b[:n:n]
		}
		out = append(out, c)
		b = b[n:]
	}
	return out, nil
}
