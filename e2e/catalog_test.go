package e2e

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/config"
	"github.com/mapfarm/mapfarm/internal/token"
)

// catalogSummary is what zeep_catalog.py prints.
type catalogSummary struct {
	Version         string   `json:"version"`
	Formats         string   `json:"formats"`
	RequiresTokens  bool     `json:"requiresTokens"`
	TokenServiceURL *string  `json:"tokenServiceURL"`
	Folders         []string `json:"folders"`
	Services        []struct {
		Name, Type, URL, ParentType, Capabilities, Description string
	} `json:"services"`
	Root []struct {
		Name string `json:"name"`
	} `json:"root"`
	FolderFault []string `json:"folderFault"`
	Followed    map[string]struct {
		Status         int      `json:"status"`
		ContentType    string   `json:"contentType"`
		Service        []string `json:"service"`
		DefaultMapName string   `json:"defaultMapName"`
		MapCount       int      `json:"mapCount"`
	} `json:"followed"`
}

// TestZeepCatalog builds zeep clients from the ArcGIS reference Catalog WSDL and from the served
// one, calls every Catalog operation, and follows every listed service to its WSDL and its
// endpoint (a client built from that WSDL calls GetDefaultMapName and GetMapCount); then again
// with tokens on, the token sent as ?token=.
func TestZeepCatalog(t *testing.T) {
	wantServices := []string{"world", "world_geographic", "usa", "usa_geographic"}
	t.Run("open", func(t *testing.T) {
		f := startFarm(t)
		endpoint := f.url + "/arcgis/services"
		for _, wsdl := range []string{referenceWSDL(t, "reference-Catalog-10.7.wsdl", endpoint), endpoint + "?wsdl"} {
			s := runScript[catalogSummary](t, "testdata/zeep_catalog.py", wsdl, endpoint, namespace)
			checkCatalog(t, f.url, s, wantServices, false)
		}
	})
	t.Run("tokens", func(t *testing.T) {
		f := startFarm(t, func(c *config.Config) { c.Security.TokenSecret = testSecret })
		signer, err := token.NewSigner([]byte(testSecret))
		if err != nil {
			t.Fatal(err)
		}
		tok, err := signer.IssueGrant(token.Grant{Client: "e2e-usa", Role: token.RoleRead, Services: []string{"usa"}}, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		endpoint := f.url + "/arcgis/services"
		s := runScript[catalogSummary](t, "testdata/zeep_catalog.py", referenceWSDL(t, "reference-Catalog-10.7.wsdl", endpoint), endpoint, namespace, tok)
		checkCatalog(t, f.url, s, []string{"usa"}, true)
	})
}

func checkCatalog(t *testing.T, base string, s catalogSummary, want []string, tokens bool) {
	t.Helper()
	if s.Version != "gisArcGISVersion107" || s.Formats != "gisServiceCatalogMessageFormatSoap" {
		t.Errorf("message version %q, formats %q", s.Version, s.Formats)
	}
	if s.RequiresTokens != tokens {
		t.Errorf("RequiresTokens %v, want %v", s.RequiresTokens, tokens)
	}
	// zeep reads an empty string as None.
	if s.TokenServiceURL != nil && *s.TokenServiceURL != "" {
		t.Errorf("TokenServiceURL %q, want empty: mapfarm has no token service", *s.TokenServiceURL)
	}
	if len(s.Folders) != 0 {
		t.Errorf("folders %v, want none", s.Folders)
	}
	var names, root []string
	for _, sd := range s.Services {
		names = append(names, sd.Name)
		if sd.Type != "MapServer" || sd.URL != base+"/arcgis/services/"+sd.Name+"/MapServer" || sd.Capabilities != "Map,Query,Data" ||
			sd.ParentType != "" || !strings.Contains(sd.Description, "in ") {
			t.Errorf("service %+v", sd)
		}
	}
	for _, sd := range s.Root {
		root = append(root, sd.Name)
	}
	if !slices.Equal(names, want) || !slices.Equal(root, want) {
		t.Errorf("services %v, root folder %v; want %v", names, root, want)
	}
	if len(s.FolderFault) != 2 || s.FolderFault[1] != `folder "nosuch" does not exist` {
		t.Errorf("unknown folder: fault %v", s.FolderFault)
	}
	if len(s.Followed) != len(want) {
		t.Errorf("followed %d services, want %d", len(s.Followed), len(want))
	}
	for name, fw := range s.Followed {
		if fw.Status != 200 || !strings.HasPrefix(fw.ContentType, "text/xml") || !slices.Equal(fw.Service, []string{name + "_MapServer"}) ||
			fw.DefaultMapName != "Layers" || fw.MapCount != 1 {
			t.Errorf("%s followed to its WSDL: %+v", name, fw)
		}
	}
}
