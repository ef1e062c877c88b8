package legislative

import "strings"

// view is what DRF calls a view: it names the resource (OPTIONS "name", the
// browsable page title and breadcrumbs) and describes it (the docstring).
type view struct {
	name string
	desc string
}

// params are the values captured from a matched URL pattern.
type params struct {
	sid, cmte, date, bill, ver string
}

// route is one URL pattern under /api/v2/, Django style: segments separated
// by "/", a trailing "" segment when the pattern ends with a slash, and
// placeholders in braces that match one non-empty segment.
type route struct {
	segs []string
	view view
	// chamber is House or Senate for chamber-filtered views, "" otherwise.
	chamber string
	kind    routeKind
}

type routeKind int

const (
	kSessionList routeKind = iota
	kSessionDetail
	kCommittees
	kAllMeetings
	kPendingMeetings
	kCommitteeMeetings
	kJournals
	kLegislation
	kBillVersions
	kBillActions
	kBillAmendments
	kBillMeetings
	kVersionDetail
	kVersionDocument
	kLegislators
	kCalendars
	kLegislativeDays
	kCommitteeDays
	kSubjectIndices
)

func newRoute(pattern string, kind routeKind, chamber, name, desc string) *route {
	return &route{segs: strings.Split(pattern, "/"), kind: kind, chamber: chamber, view: view{name: name, desc: desc}}
}

// router holds the URL patterns in the order Django would try them.
type router struct {
	routes []*route
}

func newRouter() *router {
	return &router{routes: []*route{
		newRoute("", kSessionList, "", "Session List", "List of general assembly sessions."),
		newRoute("{sid}/", kSessionDetail, "", "Session Detail", ""),
		newRoute("{sid}/committees/", kCommittees, "", "Committee List", ""),
		newRoute("{sid}/committees/meetings/", kAllMeetings, "", "Committee Meeting List", ""),
		newRoute("{sid}/committees/meetings/house/{date}", kPendingMeetings, "House", "Pending House Committee Meeting List", ""),
		newRoute("{sid}/committees/meetings/senate/{date}", kPendingMeetings, "Senate", "Pending Senate Committee Meeting List", ""),
		newRoute("{sid}/committees/{cmte}/meetings/", kCommitteeMeetings, "", "Committee Meetings", ""),
		newRoute("{sid}/journals/", kJournals, "", "Journal List", ""),
		newRoute("{sid}/journals/house/", kJournals, "House", "House Journal List", ""),
		newRoute("{sid}/journals/senate/", kJournals, "Senate", "Senate Journal List", ""),
		newRoute("{sid}/legislation/", kLegislation, "", "Legislation List", ""),
		newRoute("{sid}/legislation/{bill}/", kBillVersions, "", "Legislation Version List", ""),
		newRoute("{sid}/legislation/{bill}/actions/", kBillActions, "", "Legislation Action List", ""),
		newRoute("{sid}/legislation/{bill}/amendments/", kBillAmendments, "", "Legislation Amendment List", ""),
		newRoute("{sid}/legislation/{bill}/meetings/", kBillMeetings, "", "Legislation Meeting List", ""),
		newRoute("{sid}/legislation/{bill}/{ver}/", kVersionDetail, "", "Legislation Version Detail", ""),
		newRoute("{sid}/legislation/{bill}/{ver}/pdf/", kVersionDocument, "", "Legislation Version Pdf", ""),
		newRoute("{sid}/legislation/{bill}/{ver}/html/", kVersionDocument, "", "Legislation Version Html", ""),
		newRoute("{sid}/legislators/", kLegislators, "", "Legislator List", ""),
		newRoute("{sid}/calendars/house/", kCalendars, "House", "House Calendar List", ""),
		newRoute("{sid}/calendars/senate/", kCalendars, "Senate", "Senate Calendar List", ""),
		newRoute("{sid}/legislative_days/", kLegislativeDays, "", "Legislative Day List", ""),
		newRoute("{sid}/legislative_days/house/", kLegislativeDays, "House", "House Legislative Day List", ""),
		newRoute("{sid}/legislative_days/senate/", kLegislativeDays, "Senate", "Senate Legislative Day List", ""),
		newRoute("{sid}/cmtedays/", kCommitteeDays, "", "Committee Day List", ""),
		newRoute("{sid}/cmtedays/house/", kCommitteeDays, "House", "House Committee Day List", ""),
		newRoute("{sid}/cmtedays/senate/", kCommitteeDays, "Senate", "Senate Committee Day List", ""),
		newRoute("{sid}/subject_indices/", kSubjectIndices, "", "Subject Index List", ""),
	}}
}

// match resolves rel, the path below "/api/v2/" (no leading slash), to a
// route. It looks at the URL only, never at the data, as Django's resolver
// does: an unknown session id still matches and the view answers 404.
func (rt *router) match(rel string) (*route, params, bool) {
	var segs [8]string
	n := 0
	for {
		i := strings.IndexByte(rel, '/')
		if n == len(segs) {
			return nil, params{}, false
		}
		if i < 0 {
			segs[n] = rel
			n++
			break
		}
		segs[n] = rel[:i]
		n++
		rel = rel[i+1:]
	}
	for _, r := range rt.routes {
		if p, ok := r.bind(segs[:n]); ok {
			return r, p, true
		}
	}
	return nil, params{}, false
}

func (r *route) bind(segs []string) (params, bool) {
	var p params
	if len(segs) != len(r.segs) {
		return p, false
	}
	for i, want := range r.segs {
		got := segs[i]
		if len(want) == 0 || want[0] != '{' {
			if got != want {
				return p, false
			}
			continue
		}
		if got == "" {
			return p, false
		}
		switch want {
		case "{sid}":
			p.sid = got
		case "{cmte}":
			p.cmte = got
		case "{bill}":
			p.bill = got
		case "{ver}":
			p.ver = got
		case "{date}":
			if !looksLikeDate(got) {
				return p, false
			}
			p.date = got
		}
	}
	return p, true
}

// looksLikeDate is the URL converter for dates: \d{4}-\d{2}-\d{2}. Whether
// the date exists is the view's business (404 if not).
func looksLikeDate(s string) bool {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if i == 4 || i == 7 {
			continue
		}
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
