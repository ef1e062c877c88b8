// Package legislative serves the legislative-data JSON API under /api/v2/: a
// twin of the Ohio General Assembly's LIS API (a Django REST Framework
// service), with its session list, session details and every sub-collection
// those link to.
//
// The Handler reproduces DRF's observable behaviour (headers, error bodies,
// content negotiation, the browsable HTML page, Django's trailing-slash
// redirect and HTML 404) and serves a dataset held in memory. A dataset is
// one JSON document (see Dataset); it is validated as a whole before it is
// served, and swapped atomically, so no request ever sees two datasets.
// Import writes a validated dataset to object storage and a Reloader polls
// that storage so every replica picks up a new import without a restart.
//
// See README.md in this directory for the response shapes that are not
// known from the live service and the choices made for them.
package legislative
