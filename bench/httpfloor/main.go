// Command httpfloor is the floor of Go's net/http under bench/tiles.sh: the same tile files
// nginx serves, held in memory and answered by a bare net/http handler (a map lookup, two
// header values, one Write), with no router, middleware, cache operation or log. What mapfarm's
// tile routes cost a request above it is theirs; what it costs above nginx is net/http's.
//
//	httpfloor -root DIR -listen 127.0.0.1:PORT [-timeouts]
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

type file struct {
	data   []byte
	length []string
}

func main() {
	root := flag.String("root", ".", "the directory whose files are served, by their paths under it")
	listen := flag.String("listen", "127.0.0.1:0", "the address to listen on")
	timeouts := flag.Bool("timeouts", false, "the read and idle time-outs api.Server.Run sets (each request then sets its connection's deadlines)")
	flag.Parse()
	files, err := load(*root)
	if err != nil {
		slog.Error("httpfloor: reading the files", "err", err)
		os.Exit(1)
	}
	pngType := []string{"image/png"}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		hd := w.Header()
		hd["Content-Type"] = pngType
		hd["Content-Length"] = f.length
		_, _ = w.Write(f.data)
	})
	slog.Info("httpfloor: serving", "files", len(files), "listen", *listen)
	srv := &http.Server{Addr: *listen, Handler: h}
	if *timeouts {
		srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout = 10*time.Second, 60*time.Second, 120*time.Second
	}
	if err := srv.ListenAndServe(); err != nil {
		slog.Error("httpfloor", "err", err)
		os.Exit(1)
	}
}

// load reads every regular file under root, keyed by its URL path ("/5/3/7.png").
func load(root string) (map[string]file, error) {
	files := map[string]file{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files["/"+filepath.ToSlash(rel)] = file{data: b, length: []string{strconv.Itoa(len(b))}}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walking %s: %w", root, err)
	}
	return files, nil
}
