package legislative_test

import (
	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/legislative"
)

// The project's blob stores must satisfy the interfaces the reloader and the
// import use.
var (
	_ legislative.DatasetSource = (*blob.MinIO)(nil)
	_ legislative.DatasetSink   = (*blob.MinIO)(nil)
	_ legislative.DatasetSource = (*blob.Disk)(nil)
	_ legislative.DatasetSink   = (*blob.Disk)(nil)
)
