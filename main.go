// Command mapfarm runs the map farm. One binary, one subcommand per role:
//
//	mapfarm serve         api + coordinator + worker in one process (default). With no Redis
//	                      address configured it starts an embedded Redis-compatible server and
//	                      writes to a local-disk store: the whole farm on a machine with only Go.
//	mapfarm api           the HTTP front end only
//	mapfarm worker        a render worker only (run as many as you like)
//	mapfarm coordinator   the coordinator only
//
// Configuration: an optional YAML file (-config) and MAPFARM_* environment variables; see
// internal/config and the README.
package main

import (
	"context"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mapfarm/mapfarm/internal/app"
	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/legislative"
	"github.com/mapfarm/mapfarm/internal/logwriter"
	"github.com/mapfarm/mapfarm/internal/redisconn"
	"github.com/mapfarm/mapfarm/internal/token"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "mapfarm:", err)
		os.Exit(1)
	}
}

const usage = `usage: mapfarm [serve|api|worker|coordinator] [-config file.yaml] [-listen addr]
       mapfarm token -client NAME [-ttl 720h]
       mapfarm import-legislative [-config file.yaml] DATASET.json
       mapfarm changes install|uninstall -table NAME [-dsn DSN] [-apply]

  serve         api + coordinator + worker in one process (the default)
  api           the HTTP front end (SOAP, WSDL, images, legislative API)
  worker        a render worker
  coordinator   the coordinator
  token         print an access token for a client, signed with MAPFARM_TOKEN_SECRET
  import-legislative  validate a legislative dataset and store it; every api serves it within
                a reload interval, without a restart (a bad dataset is rejected whole)
  changes       print (and with -apply run) the SQL of PostGIS change capture for a table
                (docs/freshness.md)

Every setting can also be given as a MAPFARM_* environment variable (see README.md).`

func run(args []string) error {
	role := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		role, args = args[0], args[1:]
	}
	switch role {
	case "serve", "api", "worker", "coordinator":
	case "token":
		return issueToken(args)
	case "import-legislative":
		return importLegislative(args)
	case "changes":
		return changesCommand(args, os.Stdout)
	case "help":
		fmt.Println(usage)
		return nil
	default:
		return fmt.Errorf("unknown command %q\n%s", role, usage)
	}
	fs := flag.NewFlagSet("mapfarm "+role, flag.ContinueOnError)
	cfgPath := fs.String("config", "", "YAML configuration file")
	listen := fs.String("listen", "", "api listen address (overrides config)")
	fs.Usage = func() { fmt.Fprintln(fs.Output(), usage); fs.PrintDefaults() }
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen != "" {
		os.Setenv("MAPFARM_LISTEN", *listen)
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	// Log lines are batched on their way to stderr (one line per request adds up); Close
	// flushes them at exit.
	logOut := logwriter.New(os.Stderr, 0)
	defer logOut.Close()
	logger := newLogger(logOut, cfg.LogLevel, role)
	redisconn.RouteLogs(logger) // go-redis's one logger per process (internal/redisconn)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	b := banner{namespace: cfg.Namespace}
	return app.Run(ctx, role, cfg, logger, app.Hooks{SeedAtStart: role == app.RoleServe,
		AdminCredential: func(file string) { b.credFile = file },
		Listening: func(url string, cat *catalog.Catalog) {
			b.publicURL, b.cat = url, cat
			b.write(os.Stdout)
		}})
}

func newLogger(out io.Writer, level, role string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	return slog.New(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: l})).With("service", "mapfarm", "role", role, "pid", os.Getpid())
}

// banner is what `mapfarm serve` and `mapfarm api` print once the api listens.
type banner struct {
	publicURL, namespace string
	cat                  *catalog.Catalog
	// credFile is the file holding the admin credential the api made at start; "" when the
	// configuration names one (MAPFARM_ADMIN_TOKEN).
	credFile string
}

// write prints where everything is and a request to paste, on the first service of the
// catalog (the services file may have no "world"). It names the admin credential's file, never
// the credential.
func (b banner) write(w io.Writer) {
	services := b.cat.Services()
	var names []string
	for _, s := range services {
		names = append(names, s.Name)
	}
	first, mapName := services[0].Name, services[0].DefaultMap().Name
	endpoint := b.publicURL + "/arcgis/services/" + first + "/MapServer"
	cred := "MAPFARM_ADMIN_TOKEN (configured)"
	if b.credFile != "" {
		cred = b.credFile + " (made at start, readable by this user only; cachetool finds it)"
	}
	fmt.Fprintf(w, `mapfarm is serving %s
  SOAP endpoint: %s   (WSDL: %s?wsdl)
  services directory: %s/arcgis/rest/services
  map viewer: %s/arcgis/rest/services/%s/MapServer/viewer
  legislative API: %s/api/v2/
  admin credential (/admin/seed): %s

Try it (renders map %q of service %q through the farm and prints its URL):

curl -s -H 'Content-Type: text/xml' %s --data '<soap:Envelope xmlns:soap="http://schemas.xmlsoap.org/soap/envelope/" xmlns:gis="%s"><soap:Body><gis:ExportMapImage><MapDescription><Name>%s</Name><Rotation>0</Rotation></MapDescription><ImageDescription><ImageType><ImageFormat>gisImagePNG32</ImageFormat><ImageReturnType>gisImageReturnURL</ImageReturnType></ImageType><ImageDisplay><ImageHeight>384</ImageHeight><ImageWidth>512</ImageWidth><ImageDPI>96</ImageDPI></ImageDisplay></ImageDescription></gis:ExportMapImage></soap:Body></soap:Envelope>'

`, strings.Join(names, ", "), endpoint, endpoint, b.publicURL, b.publicURL, url.PathEscape(first), b.publicURL, cred,
		mapName, first, endpoint, b.namespace, xmlText(mapName))
}

// xmlText escapes s for XML character data inside the shell's single quotes of the banner's
// curl command.
func xmlText(s string) string {
	var buf strings.Builder
	xml.EscapeText(&buf, []byte(s))
	return strings.ReplaceAll(buf.String(), "'", "&#39;")
}

// issueToken prints a token for a client, signed with the farm's token secret.
func issueToken(args []string) error {
	fs := flag.NewFlagSet("mapfarm token", flag.ContinueOnError)
	client := fs.String("client", "", "client name the token is for (shown in logs and used for rate limits)")
	ttl := fs.Duration("ttl", 30*24*time.Hour, "how long the token is valid")
	role := fs.String("role", token.RoleRead, "read (map services and the JSON API) or admin (also the admin routes: seeding jobs)")
	services := fs.String("services", "", "comma-separated map services the token may use (default: all)")
	cfgPath := fs.String("config", "", "YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	if cfg.Security.TokenSecret == "" {
		return errors.New("set MAPFARM_TOKEN_SECRET (or MAPFARM_TOKEN_SECRET_FILE) to the farm's token secret")
	}
	signer, err := token.NewSigner([]byte(cfg.Security.TokenSecret))
	if err != nil {
		return err
	}
	g := token.Grant{Client: *client, Role: *role}
	for _, s := range strings.Split(*services, ",") {
		if s = strings.TrimSpace(s); s != "" {
			g.Services = append(g.Services, s)
		}
	}
	tok, err := signer.IssueGrant(g, time.Now().Add(*ttl))
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}

// importLegislative validates a legislative dataset and writes it to the farm's store.
func importLegislative(args []string) error {
	fs := flag.NewFlagSet("mapfarm import-legislative", flag.ContinueOnError)
	cfgPath := fs.String("config", "", "YAML configuration file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: mapfarm import-legislative [-config file.yaml] DATASET.json")
	}
	cfg, err := config.Load(*cfgPath)
	if err != nil {
		return err
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	store, err := app.OpenStore(ctx, cfg)
	if err != nil {
		return err
	}
	if err := legislative.Import(ctx, store, f); err != nil {
		return err
	}
	fmt.Printf("imported %s as %s; api processes pick it up within %s\n", fs.Arg(0), legislative.DatasetKey, cfg.LegislativeReload)
	return nil
}
