package ogcapi

import (
	"bytes"
	"fmt"
	"html/template"
)

// page is a resource written as HTML: a title, a description, a table and the links. Every
// HTML answer of the APIs is this one template, escaped by html/template.
type page struct {
	Title, Description string
	Head               []string
	Rows               [][]cell
	Links              []link
}

// cell is a table cell: text, a link when Href is set.
type cell struct {
	Text, Href string
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}</style>
</head><body>
<h1>{{.Title}}</h1>
{{with .Description}}<p>{{.}}</p>{{end}}
{{if .Rows}}<table>{{if .Head}}<tr>{{range .Head}}<th>{{.}}</th>{{end}}</tr>{{end}}
{{range .Rows}}<tr>{{range .}}<td>{{if .Href}}<a href="{{.Href}}">{{.Text}}</a>{{else}}{{.Text}}{{end}}</td>{{end}}</tr>
{{end}}</table>{{end}}
{{if .Links}}<h2>Links</h2><ul>
{{range .Links}}<li>{{if .Templated}}{{.Href}}{{else}}<a href="{{.Href}}">{{if .Title}}{{.Title}}{{else}}{{.Href}}{{end}}</a>{{end}} <small>({{.Rel}}{{with .Type}}, {{.}}{{end}})</small></li>
{{end}}</ul>{{end}}
</body></html>
`))

func (p *page) render() ([]byte, error) {
	var b bytes.Buffer
	if err := pageTemplate.Execute(&b, p); err != nil {
		return nil, fmt.Errorf("ogcapi: html page: %w", err)
	}
	return b.Bytes(), nil
}
