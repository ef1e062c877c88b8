package servicedef

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/provider"
)

// This file decodes the keys that feed the query operations: a layer's hyperlinkField, popup,
// attachments, domains, subtypes and rasterField, and a map's relationships.

// queryNodes remembers where a layer's query keys were written until the source is known.
type queryNodes struct {
	hyperlink, popup, attachments, domains, subtypes, raster *yaml.Node
}

func keep(dst **yaml.Node) func(*yaml.Node) { return func(v *yaml.Node) { *dst = v } }

// handlers are the layer keys of Queryable.
func (q *queryNodes) handlers() map[string]func(*yaml.Node) {
	return map[string]func(*yaml.Node){
		"hyperlinkField": keep(&q.hyperlink),
		"popup":          keep(&q.popup),
		"attachments":    keep(&q.attachments),
		"domains":        keep(&q.domains),
		"subtypes":       keep(&q.subtypes),
		"rasterField":    keep(&q.raster),
	}
}

const placeholderPattern = `\{([A-Za-z_][A-Za-z0-9_]*)\}`

// placeholders lists the {FIELD} names of a popup template.
func placeholders(tmpl string) []string {
	var out []string
	for _, m := range regexp.MustCompile(placeholderPattern).FindAllStringSubmatch(tmpl, -1) {
		out = append(out, m[1])
	}
	return out
}

// Fill returns the template with each {FIELD} replaced by value(FIELD).
func (p *Popup) Fill(value func(field string) string) string {
	return regexp.MustCompile(placeholderPattern).ReplaceAllStringFunc(p.Template, func(m string) string {
		return value(m[1 : len(m)-1])
	})
}

// queryable decodes the query keys of a layer whose source table is t (nil when the source is
// broken: only the syntax is checked then).
func (l *loader) queryable(q *queryNodes, src Source, t *provider.Schema) Queryable {
	var out Queryable
	field := func(at *yaml.Node, name, what string) (feature.Field, bool) {
		if t == nil {
			return feature.Field{}, false
		}
		f, ok := t.Field(name)
		if !ok {
			l.errorf(resolve(at), "%s %q is not a column of table %q (columns: %s)", what, name, t.Name, columnList(t))
		}
		return f, ok
	}
	// typedField decodes the key what, at at, naming a field of type typ (described as kind).
	typedField := func(at *yaml.Node, what string, typ feature.FieldType, kind string) string {
		name := l.str(at, what)
		f, ok := field(at, name, what)
		if !ok {
			return name
		}
		if f.Type != typ {
			l.errorf(resolve(at), "%s %q must be %s, not %s", what, f.Name, kind, f.Type)
		}
		return f.Name
	}
	if q.hyperlink != nil {
		out.HyperlinkField = typedField(q.hyperlink, "hyperlinkField", feature.FieldString, "a String field")
	}
	if q.raster != nil {
		out.RasterField = typedField(q.raster, "rasterField", feature.FieldBlob, "a Blob field holding images")
	}
	if q.popup != nil {
		p := &Popup{Type: PopupHTML}
		var tmplNode *yaml.Node
		l.fields(q.popup, "popup", map[string]func(*yaml.Node){
			"type":     func(v *yaml.Node) { p.Type = PopupType(l.str(v, "popup type")) },
			"template": func(v *yaml.Node) { tmplNode = v; p.Template = l.str(v, "template") },
		})
		if p.Type != PopupHTML && p.Type != PopupURL {
			l.errorf(resolve(q.popup), "popup type %q: want htmlText or url", p.Type)
		}
		if tmplNode == nil || strings.TrimSpace(p.Template) == "" {
			l.errorf(resolve(q.popup), "popup: missing required key \"template\"")
		} else {
			for _, name := range placeholders(p.Template) {
				field(tmplNode, name, "popup placeholder")
			}
		}
		out.Popup = p
	}
	if q.attachments != nil {
		out.Attachments = l.bool(q.attachments, "attachments")
		if out.Attachments && t != nil {
			l.checkAttachments(q.attachments, src)
		}
	}
	if q.domains != nil {
		out.Domains = map[string]*Domain{}
		n := resolve(q.domains)
		if n.Kind != yaml.MappingNode {
			l.errorf(n, "domains must be a mapping of field names to domains")
		} else {
			for _, p := range l.pairs(n) {
				name := p.key.Value
				f, ok := field(p.key, name, "domains field")
				if ok {
					name = f.Name
				}
				if d := l.domain(p.val, f, ok); d != nil {
					out.Domains[name] = d
				}
			}
		}
	}
	if q.subtypes != nil {
		st := &Subtypes{}
		var fieldNode, defNode, valuesNode *yaml.Node
		l.fields(q.subtypes, "subtypes", map[string]func(*yaml.Node){
			"field":   func(v *yaml.Node) { fieldNode = v; st.Field = l.str(v, "subtypes field") },
			"default": func(v *yaml.Node) { defNode = v; st.Default = l.int(v, "subtypes default") },
			"values":  func(v *yaml.Node) { valuesNode = v },
		})
		if fieldNode == nil {
			l.errorf(resolve(q.subtypes), "subtypes: missing required key \"field\"")
		} else if f, ok := field(fieldNode, st.Field, "subtypes field"); ok {
			st.Field = f.Name
			if f.Type != feature.FieldInteger && f.Type != feature.FieldSmallInteger {
				l.errorf(resolve(fieldNode), "subtypes field %q must be an Integer field, not %s", f.Name, f.Type)
			}
		}
		seen := map[int]*yaml.Node{}
		if valuesNode != nil {
			l.seq(valuesNode, "subtypes values", func(it *yaml.Node) {
				var s Subtype
				codeNode, ok := l.codeAndName(it, "subtype",
					func(v *yaml.Node) { s.Code = l.int(v, "subtype code") },
					func(v *yaml.Node) { s.Name = l.str(v, "subtype name") })
				if !ok {
					return
				}
				if prev, dup := seen[s.Code]; dup {
					l.errorf(resolve(codeNode), "subtype code %d listed twice (first at line %d)", s.Code, prev.Line)
					return
				}
				seen[s.Code] = resolve(codeNode)
				st.Values = append(st.Values, s)
			})
		}
		if len(st.Values) == 0 {
			l.errorf(resolve(q.subtypes), "subtypes: values must list at least one {code, name}")
		} else if defNode == nil {
			st.Default = st.Values[0].Code
		} else if _, ok := seen[st.Default]; !ok {
			l.errorf(resolve(defNode), "subtypes default %d is not one of the codes", st.Default)
		}
		out.Subtypes = st
	}
	return out
}

// codeAndName decodes it, a {code, name} mapping (what names it in problems), passing the two
// values to code and name; it reports a missing key and returns the code's node.
func (l *loader) codeAndName(it *yaml.Node, what string, code, name func(*yaml.Node)) (*yaml.Node, bool) {
	var codeNode, nameNode *yaml.Node
	l.fields(it, what, map[string]func(*yaml.Node){
		"code": func(v *yaml.Node) { codeNode = v; code(v) },
		"name": func(v *yaml.Node) { nameNode = v; name(v) },
	})
	if codeNode == nil || nameNode == nil {
		l.errorf(resolve(it), "%s: code and name are required", what)
		return nil, false
	}
	return codeNode, true
}

// domain decodes one domain of field f (ok false when the field is unknown).
func (l *loader) domain(n *yaml.Node, f feature.Field, ok bool) *Domain {
	d := &Domain{}
	var nameNode, typeNode, valuesNode, minNode, maxNode *yaml.Node
	if !l.fields(n, "domain", map[string]func(*yaml.Node){
		"name":        func(v *yaml.Node) { nameNode = v; d.Name = l.str(v, "domain name") },
		"description": func(v *yaml.Node) { d.Description = l.str(v, "domain description") },
		"type":        func(v *yaml.Node) { typeNode = v; d.Type = DomainType(l.str(v, "domain type")) },
		"values":      func(v *yaml.Node) { valuesNode = v },
		"min":         func(v *yaml.Node) { minNode = v; d.Min = l.float(v, "min") },
		"max":         func(v *yaml.Node) { maxNode = v; d.Max = l.float(v, "max") },
	}) {
		return nil
	}
	if nameNode == nil || d.Name == "" {
		l.errorf(resolve(n), "domain: missing required key \"name\"")
	}
	switch d.Type {
	case CodedValueDomain:
		if minNode != nil || maxNode != nil {
			l.errorf(resolve(n), "domain %q: min and max apply to range domains only", d.Name)
		}
		if valuesNode != nil {
			l.seq(valuesNode, "domain values", func(it *yaml.Node) {
				var c CodedValue
				codeNode, named := l.codeAndName(it, "coded value",
					func(v *yaml.Node) { c.Code = l.str(v, "code") },
					func(v *yaml.Node) { c.Name = l.str(v, "name") })
				if !named {
					return
				}
				if ok && f.Type.Numeric() {
					if _, err := strconv.ParseFloat(c.Code, 64); err != nil {
						l.errorf(resolve(codeNode), "code %q of domain %q must be a number: field %s is %s", c.Code, d.Name, f.Name, f.Type)
					}
				}
				d.Codes = append(d.Codes, c)
			})
		}
		if len(d.Codes) == 0 {
			l.errorf(resolve(n), "domain %q: values must list at least one {code, name}", d.Name)
		}
	case RangeDomain:
		if valuesNode != nil {
			l.errorf(resolve(valuesNode), "domain %q: values apply to codedValue domains only", d.Name)
		}
		if minNode == nil || maxNode == nil {
			l.errorf(resolve(n), "range domain %q needs min and max", d.Name)
		} else if d.Min > d.Max {
			l.errorf(resolve(minNode), "range domain %q: min %g is larger than max %g", d.Name, d.Min, d.Max)
		}
		if ok && !f.Type.Numeric() {
			l.errorf(resolve(n), "range domain %q needs a numeric field; %s is %s", d.Name, f.Name, f.Type)
		}
	default:
		at := typeNode
		if at == nil {
			at = n
		}
		l.errorf(resolve(at), "domain type %q: want codedValue or range", d.Type)
	}
	return d
}

// AttachmentColumns are the columns GDAL writes in a `<table>__ATTACH` table.
func AttachmentColumns() []string {
	return []string{"ATTACHMENTID", "REL_OBJECTID", "CONTENT_TYPE", "ATT_NAME", "DATA_SIZE", "DATA"}
}

func (l *loader) checkAttachments(at *yaml.Node, src Source) {
	a, ok := src.(provider.Attacher)
	if !ok {
		l.errorf(resolve(at), "attachments need a GeoPackage source")
		return
	}
	name := AttachmentTable(src.TableName())
	t, ok := l.providerSessions().Describe(a.Attachments(name))
	if !ok {
		l.errorf(resolve(at), "attachments: table %q not found in the GeoPackage", name)
		return
	}
	cols := AttachmentColumns()
	for _, c := range cols {
		if _, ok := t.Field(c); !ok && !strings.EqualFold(t.OIDField, c) {
			l.errorf(resolve(at), "attachments: table %q has no column %s (want %s)", name, c, strings.Join(cols, ", "))
		}
	}
}

// AttachmentTable is the name of the attachments table of a GeoPackage table.
func AttachmentTable(table string) string { return table + "__ATTACH" }

// relationships decodes a map's relationships, checking them against its layers and tables.
func (l *loader) relationships(n *yaml.Node, ctx *mapCtx) []*Relationship {
	var out []*Relationship
	ids := map[int]*yaml.Node{}
	next := 0
	l.seq(n, "relationships", func(it *yaml.Node) {
		r := &Relationship{Cardinality: "oneToMany"}
		var idNode, nameNode, originNode, destNode, okNode, dkNode, cardNode *yaml.Node
		if !l.fields(it, "relationship", map[string]func(*yaml.Node){
			"id":             func(v *yaml.Node) { idNode = v; r.ID = l.int(v, "id") },
			"name":           func(v *yaml.Node) { nameNode = v; r.Name = l.str(v, "name") },
			"origin":         func(v *yaml.Node) { originNode = v; r.Origin = l.int(v, "origin") },
			"destination":    func(v *yaml.Node) { destNode = v; r.Destination = l.int(v, "destination") },
			"originKey":      func(v *yaml.Node) { okNode = v; r.OriginKey = l.str(v, "originKey") },
			"destinationKey": func(v *yaml.Node) { dkNode = v; r.DestinationKey = l.str(v, "destinationKey") },
			"cardinality":    func(v *yaml.Node) { cardNode = v; r.Cardinality = l.str(v, "cardinality") },
		}) {
			return
		}
		if idNode == nil {
			r.ID = next
		}
		if prev, dup := ids[r.ID]; dup {
			l.errorf(resolve(idNode), "duplicate relationship id %d (first used at line %d)", r.ID, prev.Line)
		}
		ids[r.ID] = resolve(it)
		next = max(next, r.ID+1)
		for _, req := range []struct {
			n    *yaml.Node
			what string
		}{{nameNode, "name"}, {originNode, "origin"}, {destNode, "destination"}, {okNode, "originKey"}, {dkNode, "destinationKey"}} {
			if req.n == nil {
				l.errorf(resolve(it), "relationship: missing required key %q", req.what)
				return
			}
		}
		if r.Cardinality != "oneToOne" && r.Cardinality != "oneToMany" {
			l.errorf(resolve(cardNode), "cardinality %q: want oneToOne or oneToMany", r.Cardinality)
		}
		key := func(idAt, keyAt *yaml.Node, id int, name *string, what string) {
			t, ok := ctx.infos[id]
			if !ok {
				if _, known := ctx.ids[id]; !known {
					l.errorf(resolve(idAt), "relationship %q: %s %d is not a layer or table of map %q", r.Name, what, id, ctx.m.Name)
				}
				return
			}
			f, ok := t.Field(*name)
			if !ok {
				l.errorf(resolve(keyAt), "relationship %q: %sKey %q is not a column of table %q (columns: %s)", r.Name, what, *name, t.Name, columnList(t))
				return
			}
			*name = f.Name
		}
		key(originNode, okNode, r.Origin, &r.OriginKey, "origin")
		key(destNode, dkNode, r.Destination, &r.DestinationKey, "destination")
		out = append(out, r)
	})
	return out
}
