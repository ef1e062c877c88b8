package legislative

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// resource is one rendered JSON response body with what is needed to serve
// it fast: its ETag, its length, and a gzip-compressed copy when it is large.
type resource struct {
	route  *route
	sid    string // for a session detail placeholder: the session; its body is per day
	body   []byte
	etag   []string // header value, shared read-only
	length []string
	gz     []byte // nil when the body is below the compression threshold
	gzEtag []string
	gzLen  []string
}

// snapshot is one compiled dataset. It is immutable once built, except for
// the per-day cache, which is itself swapped atomically; a request reads
// everything from the one snapshot it loaded, so it never sees two datasets.
type snapshot struct {
	digest   string // sha256 of the source bytes, hex
	static   map[string]*resource
	sessions map[string]*compiledSession
	order    []*compiledSession // newest start first
	router   *router
	loc      *time.Location
	gzipMin  int
	day      *dayCell
	// timed: the day cache is cleared by a timer at local midnight instead
	// of checking the clock on every request (time.Now is slow on some
	// virtual machines). Used with the real clock only.
	timed bool
}

// dayCell holds the current dayState. It is separate from the snapshot so a
// pending midnight timer keeps only this small cell alive, not the dataset.
type dayCell struct {
	p atomic.Pointer[dayState]
}

type compiledSession struct {
	s        Session
	meetings []meetingOut // every meeting, newest first
}

// dayState caches what depends on the date in the legislature's time zone:
// the session details (pending-meeting links, current, active).
type dayState struct {
	from, to int64 // unix seconds, [from, to) is the local day
	date     string
	details  map[string]*resource
}

// Output shapes. Field order is the key order of the response.

type sessionSummary struct {
	ID    string `json:"id"`
	Start string `json:"start"`
	End   string `json:"end"`
	Type  string `json:"type"`
	Link  string `json:"link"`
}

type sessionDetail struct {
	sessionSummary
	Name                           string `json:"name"`
	Current                        bool   `json:"current"`
	Active                         bool   `json:"active"`
	Committees                     string `json:"committees"`
	AllCommitteeMeetings           string `json:"all_committee_meetings"`
	PendingHouseCommitteeMeetings  string `json:"pending_house_committee_meetings"`
	PendingSenateCommitteeMeetings string `json:"pending_senate_committee_meetings"`
	Journals                       string `json:"journals"`
	HouseJournals                  string `json:"house_journals"`
	SenateJournals                 string `json:"senate_journals"`
	Legislation                    string `json:"legislation"`
	Legislators                    string `json:"legislators"`
	HouseCalendars                 string `json:"house_calendars"`
	SenateCalendars                string `json:"senate_calendars"`
	AllLegislativeDays             string `json:"all_legislative_days"`
	HouseLegislativeDays           string `json:"house_legislative_days"`
	SenateLegislativeDays          string `json:"senate_legislative_days"`
	AllCommitteeDays               string `json:"all_committee_days"`
	HouseCommitteeDays             string `json:"house_committee_days"`
	SenateCommitteeDays            string `json:"senate_committee_days"`
	SubjectIndices                 string `json:"subject_indices"`
}

type committeeOut struct {
	LPID     string `json:"lpid"`
	Name     string `json:"name"`
	Chamber  string `json:"chamber"`
	Meetings string `json:"meetings"`
}

type meetingOut struct {
	MeetingID   string       `json:"meeting_id"`
	CmteLPID    string       `json:"cmte_lpid"`
	Committee   string       `json:"committee"`
	Chamber     string       `json:"chamber"`
	MeetingDate string       `json:"meeting_date"`
	MeetingTime string       `json:"meeting_time"`
	Location    string       `json:"location"`
	Canceled    bool         `json:"canceled"`
	Agenda      []AgendaItem `json:"agenda"`
}

type versionOut struct {
	versionHead
	Number       string    `json:"number"`
	Versions     string    `json:"versions"`
	Meetings     string    `json:"meetings"`
	Amendments   string    `json:"amendments"`
	Sponsors     []Member  `json:"sponsors"`
	Cosponsors   []Member  `json:"cosponsors"`
	Subjects     []Subject `json:"subjects"`
	BudgetType   string    `json:"budget_type"`
	Type         string    `json:"type"`
	Link         string    `json:"link"`
	Download     string    `json:"download"`
	DownloadHTML string    `json:"download_html"`
}

type committeeDayOut struct {
	Date     string   `json:"date"`
	Chamber  string   `json:"chamber"`
	Meetings []string `json:"meetings"`
}

type subjectBill struct {
	Number   string `json:"number"`
	Name     string `json:"name"`
	Versions string `json:"versions"`
}

type subjectIndexOut struct {
	Primary     string        `json:"primary"`
	Secondary   string        `json:"secondary"`
	Legislation []subjectBill `json:"legislation"`
}

const apiPrefix = "/api/v2/"

// encodeJSON renders v the way DRF's JSONRenderer does by default: compact,
// UTF-8 unescaped, U+2028 and U+2029 escaped.
func encodeJSON(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own output types reach here; they always encode.
		panic("legislative: encode response: " + err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func (s *snapshot) newResource(rt *route, v any) *resource {
	return s.resourceFromBody(rt, encodeJSON(v))
}

func (s *snapshot) resourceFromBody(rt *route, body []byte) *resource {
	sum := sha256.Sum256(body)
	tag := hex.EncodeToString(sum[:12])
	res := &resource{
		route:  rt,
		body:   body,
		etag:   []string{`"` + tag + `"`},
		length: []string{strconv.Itoa(len(body))},
	}
	if s.gzipMin >= 0 && len(body) >= s.gzipMin {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // valid level: no error
		_, _ = zw.Write(body)                                  // writes to a bytes.Buffer do not fail
		_ = zw.Close()
		res.gz = b.Bytes()
		res.gzEtag = []string{`W/"` + tag + `"`}
		res.gzLen = []string{strconv.Itoa(len(res.gz))}
	}
	return res
}

func sessionLink(id string) string { return apiPrefix + id + "/" }

// compile turns a validated dataset into a snapshot with every response that
// does not depend on the date already rendered.
func compile(ds *Dataset, digest string, rt *router, loc *time.Location, gzipMin int, timed bool) *snapshot {
	s := &snapshot{
		day:      &dayCell{},
		timed:    timed,
		digest:   digest,
		static:   make(map[string]*resource),
		sessions: make(map[string]*compiledSession, len(ds.Sessions)),
		router:   rt,
		loc:      loc,
		gzipMin:  gzipMin,
	}
	for _, sess := range ds.Sessions {
		cs := &compiledSession{s: sess}
		s.sessions[sess.ID] = cs
		s.order = append(s.order, cs)
	}
	slices.SortFunc(s.order, func(a, b *compiledSession) int {
		return cmp.Or(strings.Compare(b.s.Start, a.s.Start), strings.Compare(b.s.ID, a.s.ID))
	})
	list := make([]sessionSummary, 0, len(s.order))
	for _, cs := range s.order {
		list = append(list, summary(&cs.s))
	}
	s.static[""] = s.newResource(rt.byKind(kSessionList, ""), list)
	detail := rt.byKind(kSessionDetail, "")
	for _, cs := range s.order {
		s.compileSession(cs)
		s.static[cs.s.ID+"/"] = &resource{route: detail, sid: cs.s.ID}
	}
	return s
}

func (rt *router) byKind(k routeKind, chamber string) *route {
	for _, r := range rt.routes {
		if r.kind == k && r.chamber == chamber {
			return r
		}
	}
	panic("legislative: no route of kind " + strconv.Itoa(int(k)))
}

func summary(s *Session) sessionSummary {
	return sessionSummary{ID: s.ID, Start: s.Start, End: s.End, Type: s.Type, Link: sessionLink(s.ID)}
}

func chamberOrder(c string) int {
	if c == "House" {
		return 0
	}
	return 1
}

var billTypeOrder = map[string]int{"hb": 0, "sb": 1, "hr": 2, "sr": 3, "hcr": 4, "scr": 5, "hjr": 6, "sjr": 7}

func billKey(number string) (int, int) {
	m := reBillNumber.FindStringSubmatch(number)
	if m == nil {
		return 99, 0
	}
	n, _ := strconv.Atoi(m[2]) // digits only, checked by the pattern
	return billTypeOrder[m[1]], n
}

// filterBy keeps the elements whose key (as get returns it) is want; an
// empty want keeps them all.
func filterBy[T any](xs []T, want string, get func(*T) string) []T {
	out := make([]T, 0, len(xs))
	for i := range xs {
		if want == "" || get(&xs[i]) == want {
			out = append(out, xs[i])
		}
	}
	return out
}

func nonNil[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func (s *snapshot) compileSession(cs *compiledSession) {
	ss := &cs.s
	base := ss.ID + "/"
	put := func(path string, k routeKind, chamber string, v any) {
		s.static[base+path] = s.newResource(s.router.byKind(k, chamber), v)
	}

	// Committees and meetings.
	cmtes := slices.Clone(ss.Committees)
	slices.SortFunc(cmtes, func(a, b Committee) int {
		return cmp.Or(cmp.Compare(chamberOrder(a.Chamber), chamberOrder(b.Chamber)), strings.Compare(a.Name, b.Name), strings.Compare(a.LPID, b.LPID))
	})
	byLPID := make(map[string]Committee, len(cmtes))
	cmteOut := make([]committeeOut, 0, len(cmtes))
	for _, c := range cmtes {
		byLPID[c.LPID] = c
		cmteOut = append(cmteOut, committeeOut{LPID: c.LPID, Name: c.Name, Chamber: c.Chamber,
			Meetings: apiPrefix + base + "committees/" + c.LPID + "/meetings/"})
	}
	put("committees/", kCommittees, "", cmteOut)

	cs.meetings = make([]meetingOut, 0, len(ss.Meetings))
	for _, m := range ss.Meetings {
		c := byLPID[m.CmteLPID]
		cs.meetings = append(cs.meetings, meetingOut{MeetingID: m.MeetingID, CmteLPID: m.CmteLPID, Committee: c.Name,
			Chamber: c.Chamber, MeetingDate: m.MeetingDate, MeetingTime: m.MeetingTime, Location: m.Location,
			Canceled: m.Canceled, Agenda: nonNil(m.Agenda)})
	}
	slices.SortFunc(cs.meetings, func(a, b meetingOut) int {
		return cmp.Or(strings.Compare(b.MeetingDate, a.MeetingDate), strings.Compare(b.MeetingTime, a.MeetingTime), strings.Compare(a.MeetingID, b.MeetingID))
	})
	put("committees/meetings/", kAllMeetings, "", cs.meetings)
	for _, c := range cmtes {
		put("committees/"+c.LPID+"/meetings/", kCommitteeMeetings, "",
			filterBy(cs.meetings, c.LPID, func(m *meetingOut) string { return m.CmteLPID }))
	}

	// Committee days: the days on which a chamber's committees meet.
	var cdays []committeeDayOut
	idx := map[[2]string]int{}
	for _, m := range cs.meetings {
		k := [2]string{m.MeetingDate, m.Chamber}
		i, ok := idx[k]
		if !ok {
			i = len(cdays)
			idx[k] = i
			cdays = append(cdays, committeeDayOut{Date: m.MeetingDate, Chamber: m.Chamber})
		}
		cdays[i].Meetings = append(cdays[i].Meetings, m.MeetingID)
	}
	slices.SortFunc(cdays, func(a, b committeeDayOut) int {
		return cmp.Or(strings.Compare(b.Date, a.Date), cmp.Compare(chamberOrder(a.Chamber), chamberOrder(b.Chamber)))
	})
	for i := range cdays {
		slices.Sort(cdays[i].Meetings)
	}
	for _, ch := range []string{"", "House", "Senate"} {
		put(chamberPath("cmtedays/", ch), kCommitteeDays, ch, filterBy(cdays, ch, func(d *committeeDayOut) string { return d.Chamber }))
	}

	// Journals, legislative days, calendars: newest first, House before Senate.
	journals := slices.Clone(ss.Journals)
	slices.SortFunc(journals, func(a, b Journal) int {
		return cmp.Or(strings.Compare(b.Date, a.Date), cmp.Compare(chamberOrder(a.Chamber), chamberOrder(b.Chamber)))
	})
	for _, ch := range []string{"", "House", "Senate"} {
		put(chamberPath("journals/", ch), kJournals, ch, filterBy(journals, ch, func(j *Journal) string { return j.Chamber }))
	}
	ldays := slices.Clone(ss.LegislativeDays)
	slices.SortFunc(ldays, func(a, b LegislativeDay) int {
		return cmp.Or(strings.Compare(b.Date, a.Date), cmp.Compare(chamberOrder(a.Chamber), chamberOrder(b.Chamber)))
	})
	for _, ch := range []string{"", "House", "Senate"} {
		put(chamberPath("legislative_days/", ch), kLegislativeDays, ch, filterBy(ldays, ch, func(d *LegislativeDay) string { return d.Chamber }))
	}
	cals := make([]Calendar, 0, len(ss.Calendars))
	for _, c := range ss.Calendars {
		c.Items = nonNil(c.Items)
		cals = append(cals, c)
	}
	slices.SortFunc(cals, func(a, b Calendar) int { return strings.Compare(b.Date, a.Date) })
	for _, ch := range []string{"House", "Senate"} {
		put(chamberPath("calendars/", ch), kCalendars, ch, filterBy(cals, ch, func(c *Calendar) string { return c.Chamber }))
	}

	// Legislators.
	legs := slices.Clone(ss.Legislators)
	slices.SortFunc(legs, func(a, b Legislator) int {
		return cmp.Or(cmp.Compare(chamberOrder(a.Chamber), chamberOrder(b.Chamber)), strings.Compare(a.LastName, b.LastName),
			strings.Compare(a.FirstName, b.FirstName), strings.Compare(a.LPID, b.LPID))
	})
	put("legislators/", kLegislators, "", nonNil(legs))

	// Legislation.
	bills := slices.Clone(ss.Legislation)
	slices.SortFunc(bills, func(a, b Bill) int {
		at, an := billKey(a.Number)
		bt, bn := billKey(b.Number)
		return cmp.Or(cmp.Compare(at, bt), cmp.Compare(an, bn))
	})
	list := make([]versionOut, 0, len(bills))
	type subjKey struct{ p, s string }
	subjects := map[subjKey][]subjectBill{}
	for _, b := range bills {
		versions := make([]versionOut, 0, len(b.Versions))
		for _, v := range b.Versions {
			versions = append(versions, versionFor(ss.ID, b.Number, v))
		}
		list = append(list, versions[0])
		bb := "legislation/" + b.Number + "/"
		put(bb, kBillVersions, "", versions)
		for _, v := range versions {
			put(bb+v.FormattedVersion+"_"+v.VersionID+"/", kVersionDetail, "", []versionOut{v})
		}
		actions := slices.Clone(b.Actions)
		for i := range actions {
			if actions[i].Yeas != nil && *actions[i].Yeas == nil {
				actions[i].Yeas = &[]string{}
			}
			if actions[i].Nays != nil && *actions[i].Nays == nil {
				actions[i].Nays = &[]string{}
			}
		}
		slices.SortStableFunc(actions, func(x, y Action) int { return compareInstant(x.Occurred, y.Occurred) })
		put(bb+"actions/", kBillActions, "", nonNil(actions))
		put(bb+"amendments/", kBillAmendments, "", nonNil(b.Amendments))
		put(bb+"meetings/", kBillMeetings, "", filterMeetingsByBill(cs.meetings, b.Number))

		seen := map[subjKey]bool{}
		for _, v := range b.Versions {
			for _, sj := range v.Subjects {
				k := subjKey{sj.Primary, sj.Secondary}
				if seen[k] {
					continue
				}
				seen[k] = true
				subjects[k] = append(subjects[k], subjectBill{Number: b.Number, Name: versions[len(versions)-1].Name,
					Versions: apiPrefix + base + bb})
			}
		}
	}
	put("legislation/", kLegislation, "", list)

	idxOut := make([]subjectIndexOut, 0, len(subjects))
	for k, bs := range subjects {
		idxOut = append(idxOut, subjectIndexOut{Primary: k.p, Secondary: k.s, Legislation: bs})
	}
	slices.SortFunc(idxOut, func(a, b subjectIndexOut) int {
		return cmp.Or(strings.Compare(a.Primary, b.Primary), strings.Compare(a.Secondary, b.Secondary))
	})
	put("subject_indices/", kSubjectIndices, "", idxOut)
}

func chamberPath(p, chamber string) string {
	if chamber == "" {
		return p
	}
	return p + strings.ToLower(chamber) + "/"
}

func compareInstant(a, b string) int {
	ta, errA := time.Parse(time.RFC3339, a)
	tb, errB := time.Parse(time.RFC3339, b)
	if errA != nil || errB != nil {
		return strings.Compare(a, b)
	}
	return ta.Compare(tb)
}

func filterMeetingsByBill(ms []meetingOut, number string) []meetingOut {
	out := []meetingOut{}
	for _, m := range ms {
		for _, a := range m.Agenda {
			if a.BillNo == number {
				out = append(out, m)
				break
			}
		}
	}
	return out
}

func versionFor(sid, number string, v BillVersion) versionOut {
	bill := apiPrefix + sid + "/legislation/" + number + "/"
	code := v.FormattedVersion + "_" + v.VersionID + "/"
	return versionOut{
		versionHead: v.versionHead, Number: number,
		Versions: bill, Meetings: bill + "meetings/", Amendments: bill + "amendments/",
		Sponsors: nonNil(v.Sponsors), Cosponsors: nonNil(v.Cosponsors), Subjects: nonNil(v.Subjects),
		BudgetType: v.BudgetType, Type: v.Type,
		Link: bill + code, Download: bill + code + "pdf/", DownloadHTML: bill + code + "html/",
	}
}

// dayFor returns the date-dependent state for the instant clock() returns,
// building it when the local day has changed since it was last built.
func (s *snapshot) dayFor(clock func() time.Time) *dayState {
	d := s.day.p.Load()
	if d != nil && s.timed {
		return d // the midnight timer clears it
	}
	now := clock()
	u := now.Unix()
	if d != nil && u >= d.from && u < d.to {
		return d
	}
	local := now.In(s.loc)
	y, m, dd := local.Date()
	start := time.Date(y, m, dd, 0, 0, 0, 0, s.loc)
	d = &dayState{
		from:    start.Unix(),
		to:      time.Date(y, m, dd+1, 0, 0, 0, 0, s.loc).Unix(),
		date:    local.Format(time.DateOnly),
		details: make(map[string]*resource, len(s.order)),
	}
	current := ""
	for _, cs := range s.order { // newest first
		if cs.s.Type == typeRegular && cs.s.Start <= d.date {
			current = cs.s.ID
			break
		}
	}
	rt := s.router.byKind(kSessionDetail, "")
	for _, cs := range s.order {
		d.details[cs.s.ID] = s.newResource(rt, []sessionDetail{detailFor(&cs.s, d.date, cs.s.ID == current)})
	}
	s.day.p.Store(d)
	if s.timed {
		cell := s.day
		time.AfterFunc(time.Until(time.Unix(d.to, 0)), func() { cell.p.CompareAndSwap(d, nil) })
	}
	return d
}

func detailFor(ss *Session, date string, current bool) sessionDetail {
	b := sessionLink(ss.ID)
	return sessionDetail{
		sessionSummary:                 summary(ss),
		Name:                           ss.Start[:4] + "-" + ss.Type,
		Current:                        current,
		Active:                         ss.Start <= date && date <= ss.End,
		Committees:                     b + "committees/",
		AllCommitteeMeetings:           b + "committees/meetings/",
		PendingHouseCommitteeMeetings:  b + "committees/meetings/house/" + date,
		PendingSenateCommitteeMeetings: b + "committees/meetings/senate/" + date,
		Journals:                       b + "journals/",
		HouseJournals:                  b + "journals/house/",
		SenateJournals:                 b + "journals/senate/",
		Legislation:                    b + "legislation/",
		Legislators:                    b + "legislators/",
		HouseCalendars:                 b + "calendars/house/",
		SenateCalendars:                b + "calendars/senate/",
		AllLegislativeDays:             b + "legislative_days/",
		HouseLegislativeDays:           b + "legislative_days/house/",
		SenateLegislativeDays:          b + "legislative_days/senate/",
		AllCommitteeDays:               b + "cmtedays/",
		HouseCommitteeDays:             b + "cmtedays/house/",
		SenateCommitteeDays:            b + "cmtedays/senate/",
		SubjectIndices:                 b + "subject_indices/",
	}
}

// pending renders the meetings of one chamber on or after date, soonest
// first. It returns nil when date is not a real date.
func (s *snapshot) pending(rt *route, cs *compiledSession, chamber, date string) *resource {
	if !isDate(date) {
		return nil
	}
	out := []meetingOut{}
	for i := len(cs.meetings) - 1; i >= 0; i-- { // stored newest first
		m := cs.meetings[i]
		if m.Chamber == chamber && m.MeetingDate >= date {
			out = append(out, m)
		}
	}
	return s.newResource(rt, out)
}
