// Command cachetool is the operator's tool for map caches. It drives seeding jobs through the
// api's admin endpoints (or a local one-machine farm it starts in-process when no -server is
// given), reads cache metadata over the same SOAP interface clients use, and works on stored
// caches directly in the farm's object store (configured as the farm is: -config and the
// MAPFARM_* environment):
//
//	cachetool info     -endpoint URL                     maps, layers and the stored cache's scheme
//	cachetool seed     [-server URL] -service S -levels 0-7 [-extent ...] [-mode recreateAll|recreateEmpty|delete] [-format pbf]
//	cachetool status   -server URL [job]                  jobs, and the refresh backlog of every cache
//	cachetool expire   -server URL -service S (-extent ... | -polygon "x,y x,y x,y" | -tiles FILE)
//	cachetool cancel   -server URL job
//	cachetool truncate [-server URL] -service S [-levels ...] [-extent ...]
//	cachetool verify   -service S [-levels ...] [-extent ...] | -job ID [-server URL]
//	cachetool export   -service S [-vector] (-dir DIR | -file F.pmtiles | -file F.mbtiles)
//	cachetool import   -service S (-dir DIR | -file F.pmtiles | -file F.mbtiles)
//	cachetool convert  -service S -to exploded|compact|compactV2 (-dir DIR | -dest-root ROOT)
//
// The seeding commands send the admin credential MAPFARM_ADMIN_TOKEN, else, for an api on this
// machine (a loopback -server URL), the one that api made at start and keeps in the state
// directory (internal/admincred). Long commands draw a progress bar with rate and ETA on stderr.
// See docs/seeding.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"time"

	"github.com/mapfarm/mapfarm/internal/gisxml"
	"github.com/mapfarm/mapfarm/internal/soap"
)

const usage = `usage: cachetool <command> [flags]

commands:
  info      describe a service's maps, layers and stored cache (-endpoint URL)
  seed      seed a cache through the farm (-server URL, or a local farm) and show progress
  status    show a seeding job, or list recent jobs and the refresh backlog (-server URL [job])
  expire    render an area of a cache again: by extent, polygon or a z/x/y tile list (-server URL)
  cancel    cancel a seeding job (-server URL job)
  truncate  delete the tiles of an area and levels (a delete job)
  verify    check every bundle and tile decodes and every tile of the area is present
  export    copy a stored cache to a local folder, or write it to a PMTiles or MBTiles file
  import    copy a local cache folder, or a PMTiles or MBTiles file, into the store
  convert   rewrite a cache in another storage layout

run "cachetool <command> -h" for a command's flags`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "cachetool:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "info":
		return info(ctx, args[1:], out)
	case "seed", "truncate":
		return seedCmd(ctx, args[0], args[1:], out, stderr)
	case "status":
		return statusCmd(ctx, args[1:], out)
	case "expire":
		return expireCmd(ctx, args[1:], os.Stdin, out)
	case "cancel":
		return cancelCmd(ctx, args[1:], out)
	case "verify":
		return verifyCmd(ctx, args[1:], out, stderr)
	case "export":
		return exportCmd(ctx, args[1:], out, stderr)
	case "import":
		return importCmd(ctx, args[1:], out, stderr)
	case "convert":
		return convertCmd(ctx, args[1:], out, stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(out, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

type infoOptions struct {
	endpoint  string
	namespace string
	timeout   time.Duration
}

func info(ctx context.Context, args []string, out io.Writer) error {
	var o infoOptions
	fs := flag.NewFlagSet("cachetool info", flag.ContinueOnError)
	fs.StringVar(&o.endpoint, "endpoint", "http://127.0.0.1:8080/arcgis/services/world/MapServer", "MapServer SOAP endpoint")
	fs.StringVar(&o.namespace, "namespace", "http://schemas.mapfarm.dev/gis/10.7", "the service's XML namespace")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "time limit for the whole command")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cl := &soap.Client{Codec: soap.NewCodec(o.namespace, soap.Limits{}), Endpoint: o.endpoint}
	var count gisxml.GetMapCountResponse
	if err := cl.Call(ctx, "GetMapCount", &gisxml.GetMapCount{}, &count); err != nil {
		return err
	}
	for i := 0; i < count.Result; i++ {
		var name gisxml.GetMapNameResponse
		if err := cl.Call(ctx, "GetMapName", &gisxml.GetMapName{Index: i}, &name); err != nil {
			return err
		}
		var si gisxml.GetServerInfoResponse
		if err := cl.Call(ctx, "GetServerInfo", &gisxml.GetServerInfo{MapName: name.Result}, &si); err != nil {
			return err
		}
		printMap(out, si.Result)
		printCache(ctx, cl, out, name.Result)
	}
	return nil
}

// printCache prints the stored cache of a map, if it has one.
func printCache(ctx context.Context, cl *soap.Client, out io.Writer, mapName string) {
	var cd gisxml.GetCacheDescriptionInfoResponse
	if err := cl.Call(ctx, "GetCacheDescriptionInfo", &gisxml.GetCacheDescriptionInfo{MapName: mapName}, &cd); err != nil {
		fmt.Fprintf(out, "  no tile cache (%v)\n", err)
		return
	}
	var st gisxml.GetCacheStorageInfoResponse
	if err := cl.Call(ctx, "GetCacheStorageInfo", &gisxml.GetCacheStorageInfo{MapName: mapName}, &st); err != nil {
		fmt.Fprintf(out, "  cache storage: %v\n", err)
		return
	}
	d := cd.Result
	levels := make([]int, 0, len(d.TileCacheInfo.LODInfos))
	for _, l := range d.TileCacheInfo.LODInfos {
		levels = append(levels, l.LevelID)
	}
	fmt.Fprintf(out, "  cache %s  %s  %dx%d px  %d dpi  %s  levels %v\n", d.ServiceType, st.Result.StorageFormat,
		d.TileCacheInfo.TileCols, d.TileCacheInfo.TileRows, d.TileCacheInfo.DPI, d.TileImageInfo.CacheTileFormat, levels)
}

func printMap(out io.Writer, m *gisxml.MapServerInfo) {
	wkid := 0
	if m.SpatialReference != nil && m.SpatialReference.SpatialReferencePart().WKID != nil {
		wkid = *m.SpatialReference.SpatialReferencePart().WKID
	}
	fmt.Fprintf(out, "map %q  spatial reference %d  units %s\n", m.Name, wkid, m.Units)
	if e, ok := m.FullExtent.(*gisxml.EnvelopeN); ok {
		fmt.Fprintf(out, "  full extent  %.6f %.6f %.6f %.6f\n", e.XMin, e.YMin, e.XMax, e.YMax)
	}
	for _, l := range m.MapLayerInfos {
		fmt.Fprintf(out, "  layer %d %q  %s  scales 1:%g–1:%g  %d fields\n", l.LayerID, l.Name, l.LayerType, l.MinScale, l.MaxScale, len(l.Fields.FieldArray))
	}
	for _, t := range m.StandaloneTableInfos {
		fmt.Fprintf(out, "  table %d %q\n", t.ID, t.Name)
	}
}
