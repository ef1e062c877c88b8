// Package symbology is mapfarm's one model of how features are drawn: the
// symbols (simple, picture and character), the renderers that pick a
// symbol for a feature (simple, unique value, class breaks), the label
// classes with their fonts, halos and placement, and colours.
//
// A layer's service definition holds these types (package servicedef
// decodes them from YAML and checks them against the data), a request's
// drawing overrides hold them too once a front end has decoded them
// (package mapserver/cartography converts the SOAP and REST forms, once),
// and package mapdraw turns them into the renderer's resolved render.Symbol
// and label styles as a map is drawn. Nothing here reads files or knows the
// definition format, so the renderer's adapters and the vector-style
// generator depend on this package alone. The farm's task payload keeps
// plain types of its own (package task), converted at the queue edge in
// mapdraw/payload.go.
//
// Sizes and widths are in points (1/72 inch). The zero values of the
// optional parts (Outline, Halo, a LabelPlacement) mean none or the
// default.
package symbology
