// Command cachetool is the operator's tool for map caches. It talks to a running farm over the
// same SOAP interface clients use.
//
//	cachetool info -endpoint http://127.0.0.1:8080/arcgis/services/world/MapServer
//
// prints what a cache would be built from: the service's maps, their spatial references,
// extents and layers. Seeding, status, cancel, truncate, verify and import/export arrive with
// the tile-cache work (see the README's status section).
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
  info    describe a service's maps and layers (-endpoint URL)`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "cachetool:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	switch args[0] {
	case "info":
		return info(ctx, args[1:], out)
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
	}
	return nil
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
