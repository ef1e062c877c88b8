package legislative_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mapfarm/mapfarm/internal/legislative"
)

// mapStore stands in for the blob store in the examples.
type mapStore map[string][]byte

func (m mapStore) Put(_ context.Context, key string, data []byte, _ string) error {
	m[key] = data
	return nil
}

func (m mapStore) Get(_ context.Context, key string) ([]byte, error) {
	if b, ok := m[key]; ok {
		return b, nil
	}
	return nil, fs.ErrNotExist
}

func ExampleNew() {
	h := legislative.New(legislative.Options{
		Now: func() time.Time { return time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC) },
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/v2/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Vary"))
	fmt.Println(rec.Body.String()[:135])
	// Output:
	// 200 application/json Accept
	// [{"id":"general_assembly_136","start":"2025-01-06","end":"2026-12-31","type":"Regular Session","link":"/api/v2/general_assembly_136/"},
}

func ExampleImport() {
	ctx := context.Background()
	store := mapStore{}
	h := legislative.New(legislative.Options{})
	reloader := legislative.NewReloader(h, store, legislative.ReloaderOptions{})

	doc := `{"sessions":[{"id":"general_assembly_137","start":"2027-01-04","end":"2028-12-31","type":"Regular Session"}]}`
	if err := legislative.Import(ctx, store, strings.NewReader(doc)); err != nil {
		fmt.Println(err)
		return
	}
	changed, err := reloader.Poll(ctx)
	fmt.Println(changed, err)

	bad := `{"sessions":[{"id":"general_assembly_137","start":"2027-01-04","end":"2026-12-31","type":"Regular Session"}]}`
	fmt.Println(legislative.Import(ctx, store, strings.NewReader(bad)))
	// Output:
	// true <nil>
	// legislative: invalid dataset: 1 problem(s): sessions[0].end: 2026-12-31 is before start 2027-01-04
}
