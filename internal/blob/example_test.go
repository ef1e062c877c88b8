package blob_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"os"

	"github.com/mapfarm/mapfarm/internal/blob"
)

func ExampleDisk() {
	dir, err := os.MkdirTemp("", "blob-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	store, err := blob.NewDisk(dir)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	if err := store.Put(ctx, "outputs/map.png", []byte("\x89PNG..."), ""); err != nil {
		log.Fatal(err)
	}
	info, err := store.Stat(ctx, "outputs/map.png")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(info.Key, info.Size, info.ContentType)

	_, err = store.Get(ctx, "outputs/gone.png")
	fmt.Println(errors.Is(err, fs.ErrNotExist))
	// Output:
	// outputs/map.png 7 image/png
	// true
}
