package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	_ "image/jpeg" // decode JPEG tiles
	_ "image/png"  // decode PNG tiles
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/blob"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
	"github.com/mapfarm/mapfarm/internal/seed"
	"github.com/mapfarm/mapfarm/internal/tilearchive"
	"github.com/mapfarm/mapfarm/internal/tilecache"
)

// openStore opens the farm's object store from the mapfarm configuration (file and MAPFARM_*
// environment), as the farm itself does.
func openStore(ctx context.Context, path string) (tilecache.Store, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, err
	}
	if cfg.Store.Kind == "minio" {
		m := cfg.Store.MinIO
		return blob.NewMinIO(ctx, blob.MinIOConfig{Endpoint: m.Endpoint, AccessKey: m.AccessKey, SecretKey: m.SecretKey, Bucket: m.Bucket, UseSSL: m.UseSSL})
	}
	return blob.NewDisk(cfg.Store.Dir)
}

// cacheFlags name one cache folder in a store.
type cacheFlags struct {
	config  string
	service string
	mapName string
	folder  string
	root    string
	vector  bool
}

func (c *cacheFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "mapfarm configuration file (default: MAPFARM_* environment only) for the store")
	fs.StringVar(&c.service, "service", "world", "service name")
	fs.StringVar(&c.mapName, "map", "Layers", "map name")
	fs.StringVar(&c.folder, "folder", tilecache.FusedLayer, "cache folder: _alllayers or a layer name")
	fs.StringVar(&c.root, "root", "", "cache root in the store (default arcgiscache/<service>/<map>, or <map>_vector with -vector)")
	fs.BoolVar(&c.vector, "vector", false, "the map's vector tile cache (root arcgiscache/<service>/<map>_vector)")
}

func (c *cacheFlags) cacheRoot() string {
	switch {
	case c.root != "":
		return strings.TrimSuffix(c.root, "/")
	case c.vector:
		return seed.VectorCacheRoot(c.service, c.mapName)
	}
	return seed.CacheRoot(c.service, c.mapName)
}

// bundleTiles is one bundle's stored tiles, or the error reading it.
type bundleTiles struct {
	bundle tilecache.Bundle
	key    string
	tiles  map[tilecache.Tile][]byte
	err    error
}

// scanBundles reads every bundle (or, exploded, every bundle's worth of tiles) of a cache
// folder in key order and calls fn with each; a bundle that cannot be read is passed with its
// error, and scanning goes on.
func scanBundles(ctx context.Context, store tilecache.Store, root, folder string, info tilecache.CacheInfo, fn func(bundleTiles) error) error {
	prefix := root + "/" + folder + "/"
	var keys []string
	if err := store.List(ctx, prefix, func(i blob.Info) error { keys = append(keys, i.Key); return ctx.Err() }); err != nil {
		return fmt.Errorf("list %s: %w", prefix, err)
	}
	sort.Strings(keys)
	if info.Storage == tilecache.Exploded {
		groups := map[tilecache.Bundle][]string{}
		var order []tilecache.Bundle
		for _, k := range keys {
			t, _, err := tilecache.ParseTilePath(strings.TrimPrefix(k, prefix))
			if err != nil {
				continue
			}
			b := tilecache.BundleOf(t)
			if _, ok := groups[b]; !ok {
				order = append(order, b)
			}
			groups[b] = append(groups[b], k)
		}
		for _, b := range order {
			bt := bundleTiles{bundle: b, key: prefix, tiles: map[tilecache.Tile][]byte{}}
			for _, k := range groups[b] {
				t, _, _ := tilecache.ParseTilePath(strings.TrimPrefix(k, prefix)) // parsed when grouped
				data, err := store.Get(ctx, k)
				if err != nil {
					bt.err = fmt.Errorf("%s: %w", k, err)
					break
				}
				bt.tiles[t] = data
			}
			if err := fn(bt); err != nil {
				return err
			}
		}
		return nil
	}
	for _, k := range keys {
		if !strings.HasSuffix(k, ".bundle") {
			continue
		}
		b, err := tilecache.ParseBundlePath(strings.TrimPrefix(k, prefix))
		if err != nil {
			continue
		}
		bt := bundleTiles{bundle: b, key: k}
		data, err := store.Get(ctx, k)
		switch {
		case err != nil:
			bt.err = err
		case info.Storage == tilecache.CompactV1:
			var idx []byte
			if idx, err = store.Get(ctx, strings.TrimSuffix(k, ".bundle")+".bundlx"); err != nil {
				bt.err = err
			} else {
				bt.tiles, bt.err = tilecache.DecodeCompactV1(bt.bundle, data, idx)
			}
		default:
			bt.tiles, bt.err = tilecache.DecodeCompactV2(bt.bundle, data)
		}
		if err := fn(bt); err != nil {
			return err
		}
	}
	return nil
}

// verifyCmd checks a stored cache: every bundle decodes, every tile decodes as an image, and
// every tile of the area of interest at the levels is present; with -job, every tile a finished
// seeding job planned is present or one it left empty on purpose (verifyJob).
func verifyCmd(ctx context.Context, args []string, out, stderr io.Writer) error {
	var cf cacheFlags
	fs := flag.NewFlagSet("cachetool verify", flag.ContinueOnError)
	cf.register(fs)
	levels := fs.String("levels", "", "levels to check for completeness (default: every level of conf.xml; of a vector cache, the levels that hold tiles)")
	extent := fs.String("extent", "", "area of interest xmin,ymin,xmax,ymax (default: conf.cdi's extent)")
	allowMissing := fs.Bool("allow-missing", false, "do not report missing tiles (caches seeded with skipEmpty leave empty tiles out; -job tells them apart)")
	job := fs.String("job", "", "check the tiles this finished seeding job planned (its cache, layers, levels and area), counting the tiles it left empty on purpose (skipEmpty) as expected; reads the job from the api (-server)")
	server := fs.String("server", "http://127.0.0.1:8080", "with -job: base URL of the mapfarm api")
	if err := fs.Parse(args); err != nil {
		return err
	}
	store, err := openStore(ctx, cf.config)
	if err != nil {
		return err
	}
	if *job != "" {
		return verifyJob(ctx, newAdminClient(*server, 30*time.Second), *job, store, out, stderr)
	}
	root := cf.cacheRoot()
	info, cdi, err := tilecache.ReadMetadata(ctx, store, root)
	if err != nil {
		return fmt.Errorf("cache %s: %w", root, err)
	}
	lv, err := parseLevels(*levels)
	if err != nil {
		return err
	}
	vector := strings.EqualFold(info.Scheme.Format, "PBF")
	if len(lv) == 0 && !vector {
		lv = info.Scheme.Levels()
	}
	aoi := cdi
	if e, err := parseExtent(*extent); err != nil {
		return err
	} else if e != nil {
		aoi = orb.Bound{Min: orb.Point{e[0], e[1]}, Max: orb.Point{e[2], e[3]}}
	}
	sc, err := scanFolder(ctx, store, root, cf.folder, info, stderr)
	if err != nil {
		return err
	}
	if len(lv) == 0 {
		// A vector cache's conf.xml lists every level the VectorTileServer serves (0 to 14);
		// the levels checked are those that hold tiles.
		seen := map[int]bool{}
		for t := range sc.present {
			if !seen[t.Level] {
				seen[t.Level] = true
				lv = append(lv, t.Level)
			}
		}
		slices.Sort(lv)
	}
	problems := sc.problems
	missing := 0
	if aoi != (orb.Bound{}) && len(lv) > 0 {
		cover, err := info.Scheme.Cover(aoi, lv...)
		if err != nil {
			return err
		}
		for t := range cover.Tiles() {
			if !sc.present[t] {
				missing++
				if !*allowMissing && missing <= 20 {
					problems = append(problems, fmt.Sprintf("tile %v is missing", t))
				}
			}
		}
	}
	fmt.Fprintf(out, "cache %s/%s: %s, %d bundles, %d tiles decoded, %d tiles of the area missing, %d problems\n",
		root, cf.folder, info.Storage, sc.bundles, len(sc.present), missing, len(problems))
	for _, p := range problems {
		fmt.Fprintln(out, "  "+p)
	}
	if len(problems) > 0 || (missing > 0 && !*allowMissing) {
		return fmt.Errorf("verify: cache %s is not complete and consistent", root)
	}
	return nil
}

// scanned is what scanFolder found in a cache folder: its bundles, the tiles that decode, and
// what is wrong.
type scanned struct {
	bundles  int
	present  map[tilecache.Tile]bool
	problems []string
}

// scanFolder decodes every bundle and tile of a cache folder, showing its progress on stderr.
func scanFolder(ctx context.Context, store tilecache.Store, root, folder string, info tilecache.CacheInfo, stderr io.Writer) (scanned, error) {
	sc := scanned{present: map[tilecache.Tile]bool{}}
	nt := 0
	start := time.Now()
	err := scanBundles(ctx, store, root, folder, info, func(bt bundleTiles) error {
		sc.bundles++
		if bt.err != nil {
			sc.problems = append(sc.problems, fmt.Sprintf("bundle %v (%s): %v", bt.bundle, bt.key, bt.err))
			return nil
		}
		for t, data := range bt.tiles {
			nt++
			if !bt.bundle.Contains(t) {
				sc.problems = append(sc.problems, fmt.Sprintf("tile %v is in bundle %v", t, bt.bundle))
				continue
			}
			if err := decodeTile(info.Scheme.Format, data); err != nil {
				sc.problems = append(sc.problems, fmt.Sprintf("tile %v: %v", t, err))
				continue
			}
			sc.present[t] = true
		}
		fmt.Fprintf(stderr, "\rverify: %d bundles, %d tiles, %.0f tiles/s   ", sc.bundles, nt, float64(nt)/max(time.Since(start).Seconds(), 1e-3))
		return nil
	})
	fmt.Fprintln(stderr)
	return sc, err
}

// decodeTile checks that a tile of a cache of the format (conf.xml's CacheTileFormat) decodes:
// as an image, or, for a vector cache (PBF), as a Mapbox Vector Tile that keeps the
// specification's rules (internal/mvt/mvtcheck).
func decodeTile(format string, data []byte) error {
	if strings.EqualFold(format, "PBF") {
		if problems, _ := mvtcheck.Check(data, mvtcheck.Options{MaxProblems: 3}); len(problems) > 0 {
			return fmt.Errorf("not a valid vector tile: %v", problems)
		}
		return nil
	}
	if _, _, err := image.Decode(bytes.NewReader(data)); err != nil {
		return fmt.Errorf("does not decode: %w", err)
	}
	return nil
}

// verifyJob checks the cache a finished seeding job wrote against the job's own record: every
// bundle and tile of its layers decodes, and the tiles it planned (its metatiles' tiles, at its
// levels, over its area) that are absent are exactly as many as it counted empty (skipEmpty:
// nothing but background, so left out on purpose) and failed. The job records how many tiles it
// left empty, not which: a count check, which a lost bundle fails unless some other tile appeared
// in its place. A job with failed tiles does not pass (they are missing, not empty). Tiles the
// job did not plan are not looked at.
func verifyJob(ctx context.Context, cl *adminClient, id string, store tilecache.Store, out, stderr io.Writer) error {
	var st seed.Status
	if err := cl.do(ctx, http.MethodGet, "/admin/seed/"+id, nil, &st); err != nil {
		return err
	}
	sp := st.Spec
	switch {
	case sp == nil:
		return fmt.Errorf("verify: job %s has no spec", id)
	case sp.Mode == seed.Delete:
		return fmt.Errorf("verify: job %s is a delete job: nothing it planned should be there", id)
	case st.State != seed.StateDone:
		return fmt.Errorf("verify: job %s is %s, not done: verify -job checks what a finished job left", id, st.State)
	}
	plan, err := seed.Plan(sp, 0)
	if err != nil {
		return err
	}
	info := sp.Info()
	var problems []string
	bundles, decoded, planned, missing := 0, 0, int64(0), int64(0)
	for layer, l := range sp.Layers {
		sc, err := scanFolder(ctx, store, sp.Root, l.Folder, info, stderr)
		if err != nil {
			return err
		}
		bundles, decoded = bundles+sc.bundles, decoded+len(sc.present)
		problems = append(problems, sc.problems...)
		for u := range plan {
			if u.Layer != layer {
				continue
			}
			for _, m := range u.Metatiles {
				for t := range m.Tiles() {
					planned++
					if !sc.present[t] {
						missing++
					}
				}
			}
		}
	}
	if st.Failed > 0 {
		problems = append(problems, fmt.Sprintf("the job failed %d tiles", st.Failed))
	}
	if missing != st.Empty+st.Failed {
		problems = append(problems, fmt.Sprintf("%d of the tiles the job planned are absent, but it left %d empty and failed %d", missing, st.Empty, st.Failed))
	}
	fmt.Fprintf(out, "cache %s (job %s, %d layers): %s, %d bundles, %d tiles decoded; %d tiles planned, %d absent, %d of them left empty on purpose; %d problems\n",
		sp.Root, id, len(sp.Layers), info.Storage, bundles, decoded, planned, missing, min(missing, st.Empty), len(problems))
	for _, p := range problems {
		fmt.Fprintln(out, "  "+p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("verify: cache %s is not what job %s wrote", sp.Root, id)
	}
	return nil
}

// exportCmd copies a cache root (conf.xml, conf.cdi and every layer folder) from the store to
// a local folder, keeping Esri's layout, or writes one cache folder to a PMTiles or MBTiles
// archive (-file; archive.go).
func exportCmd(ctx context.Context, args []string, out, stderr io.Writer) error {
	cf, dir, file, _, err := parseDirFlags("export", "local folder to write the cache to", args)
	if err != nil {
		return err
	}
	src, err := openStore(ctx, cf.config)
	if err != nil {
		return err
	}
	if file != "" {
		n, err := exportArchive(ctx, src, cf.cacheRoot(), cf.folder, cf.service+"/"+cf.mapName, file, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "exported %d tiles of %s/%s to %s\n", n, cf.cacheRoot(), cf.folder, file)
		return nil
	}
	dst, err := blob.NewDisk(dir)
	if err != nil {
		return err
	}
	n, err := copyPrefix(ctx, src, cf.cacheRoot()+"/", dst, "", stderr)
	fmt.Fprintf(out, "exported %d objects of %s to %s\n", n, cf.cacheRoot(), dir)
	return err
}

// importCmd copies a local cache folder (as export writes it, or an ArcGIS cache's layer
// folder holding conf.xml) into the store at the cache root, or reads a PMTiles or MBTiles
// archive (-file) into a cache folder there; an archive of vector tiles goes to the map's
// vector cache root unless -root says otherwise.
func importCmd(ctx context.Context, args []string, out, stderr io.Writer) error {
	cf, dir, file, ia, err := parseDirFlags("import", "local folder holding conf.xml and the layer folders", args)
	if err != nil {
		return err
	}
	if file != "" {
		storage, err := tilecache.ParseStorageFormat(ia.storage)
		if err != nil {
			return err
		}
		r, err := tilearchive.Open(file)
		if err != nil {
			return err
		}
		vector := r.Metadata().Format == "pbf"
		r.Close()
		if vector && cf.root == "" {
			cf.vector = true
		}
		dst, err := openStore(ctx, cf.config)
		if err != nil {
			return err
		}
		n, err := importArchive(ctx, file, dst, cf.cacheRoot(), cf.folder, storage, ia.tileSize, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "imported %d tiles from %s to %s/%s\n", n, file, cf.cacheRoot(), cf.folder)
		return nil
	}
	src, err := blob.NewDisk(dir)
	if err != nil {
		return err
	}
	if _, _, err := tilecache.ReadMetadata(ctx, src, ""); err != nil {
		return fmt.Errorf("import: %s: %w", dir, err)
	}
	dst, err := openStore(ctx, cf.config)
	if err != nil {
		return err
	}
	n, err := copyPrefix(ctx, src, "", dst, cf.cacheRoot()+"/", stderr)
	fmt.Fprintf(out, "imported %d objects from %s to %s\n", n, dir, cf.cacheRoot())
	return err
}

// importArchiveFlags are import's flags for an archive.
type importArchiveFlags struct {
	storage  string
	tileSize int
}

// parseDirFlags parses the flags of export and import (cmd): the cache flags and exactly one
// of -dir, the local folder, whose usage is dirUsage, and -file, an archive.
func parseDirFlags(cmd, dirUsage string, args []string) (cf cacheFlags, dir, file string, ia importArchiveFlags, err error) {
	fs := flag.NewFlagSet("cachetool "+cmd, flag.ContinueOnError)
	cf.register(fs)
	fs.StringVar(&dir, "dir", "", dirUsage)
	fs.StringVar(&file, "file", "", "a PMTiles (.pmtiles) or MBTiles (.mbtiles) archive instead of a folder: one cache folder (-folder) of a Web Mercator cache, tiles by zoom")
	if cmd == "import" {
		fs.StringVar(&ia.storage, "storage", "compactV2", "with -file: storage layout of the imported cache (exploded, compact or compactV2)")
		fs.IntVar(&ia.tileSize, "tile-size", 0, "with -file: tile size in px (default: a raster tile's own; 512 for vector tiles)")
	}
	if err = fs.Parse(args); err != nil {
		return
	}
	if (dir == "") == (file == "") {
		err = fmt.Errorf("%s: give one of -dir (a cache folder) and -file (a .pmtiles or .mbtiles archive)", cmd)
		return
	}
	if file != "" {
		_, err = tilearchive.KindOf(file)
	}
	return
}

// copyPrefix copies every object under prefix of src to dst, replacing prefix by to.
func copyPrefix(ctx context.Context, src tilecache.Store, prefix string, dst tilecache.Store, to string, stderr io.Writer) (int, error) {
	var keys []blob.Info
	if err := src.List(ctx, prefix, func(i blob.Info) error { keys = append(keys, i); return ctx.Err() }); err != nil {
		return 0, err
	}
	start := time.Now()
	for i, k := range keys {
		data, err := src.Get(ctx, k.Key)
		if err != nil {
			return i, err
		}
		if err := dst.Put(ctx, to+strings.TrimPrefix(k.Key, prefix), data, k.ContentType); err != nil {
			return i, err
		}
		fmt.Fprintf(stderr, "\r%d/%d objects  %.0f objects/s   ", i+1, len(keys), float64(i+1)/max(time.Since(start).Seconds(), 1e-3))
	}
	if len(keys) > 0 {
		fmt.Fprintln(stderr)
	}
	return len(keys), nil
}

// convertCmd rewrites a cache folder in another storage layout, into a local folder or
// another root of the store, with its conf.xml and conf.cdi.
func convertCmd(ctx context.Context, args []string, out, stderr io.Writer) error {
	var cf cacheFlags
	fs := flag.NewFlagSet("cachetool convert", flag.ContinueOnError)
	cf.register(fs)
	to := fs.String("to", "", "target layout: exploded, compact (V1) or compactV2 (required)")
	dir := fs.String("dir", "", "local folder to write the converted cache to")
	destRoot := fs.String("dest-root", "", "cache root in the store to write the converted cache to (instead of -dir)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	format, err := tilecache.ParseStorageFormat(*to)
	if err != nil {
		return err
	}
	src, err := openStore(ctx, cf.config)
	if err != nil {
		return err
	}
	var dst tilecache.Store
	droot := ""
	switch {
	case *dir != "" && *destRoot == "":
		if dst, err = blob.NewDisk(*dir); err != nil {
			return err
		}
	case *destRoot != "" && *dir == "":
		dst, droot = src, strings.TrimSuffix(*destRoot, "/")
		if droot == cf.cacheRoot() {
			return errors.New("convert: -dest-root must differ from the source root")
		}
	default:
		return errors.New("convert: give exactly one of -dir and -dest-root")
	}
	root := cf.cacheRoot()
	info, extent, err := tilecache.ReadMetadata(ctx, src, root)
	if err != nil {
		return fmt.Errorf("cache %s: %w", root, err)
	}
	dc, err := tilecache.New(dst, tilecache.Options{Root: droot, Layer: cf.folder, Format: format, TileFormat: info.Scheme.Format})
	if err != nil {
		return err
	}
	nb, nt := 0, 0
	start := time.Now()
	err = scanBundles(ctx, src, root, cf.folder, info, func(bt bundleTiles) error {
		if bt.err != nil {
			return fmt.Errorf("bundle %v: %w", bt.bundle, bt.err)
		}
		w, err := dc.NewBundleWriter(bt.bundle)
		if err != nil {
			return err
		}
		for t, data := range bt.tiles {
			if err := w.Put(t, data); err != nil {
				return err
			}
		}
		if err := w.Flush(ctx); err != nil {
			return err
		}
		nb++
		nt += len(bt.tiles)
		fmt.Fprintf(stderr, "\rconvert: %d bundles, %d tiles, %.0f tiles/s   ", nb, nt, float64(nt)/max(time.Since(start).Seconds(), 1e-3))
		return nil
	})
	fmt.Fprintln(stderr)
	if err != nil {
		return err
	}
	info.Storage, info.PacketSize = format, 0
	if err := dc.WriteMetadata(ctx, info, extent); err != nil {
		return err
	}
	fmt.Fprintf(out, "converted %d bundles, %d tiles of %s/%s to %s\n", nb, nt, root, cf.folder, format)
	return nil
}
