package legislative

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
)

//go:embed data/default.json
var defaultDatasetJSON []byte

// DefaultDatasetJSON returns a copy of the dataset shipped with the package:
// the real session list (122nd to 136th General Assembly and the special
// sessions) with the few sub-collection records known from public sources.
func DefaultDatasetJSON() []byte {
	return bytes.Clone(defaultDatasetJSON)
}

// ErrInvalidDataset is wrapped by every error that rejects a dataset.
var ErrInvalidDataset = errors.New("legislative: invalid dataset")

// maxProblems caps how many problems a ValidationError lists.
const maxProblems = 20

// ValidationError lists what is wrong with a dataset. It unwraps to
// ErrInvalidDataset.
type ValidationError struct {
	Problems []string // each "path: what is wrong"
	More     int      // problems found beyond those listed
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "legislative: invalid dataset: %d problem(s): ", len(e.Problems)+e.More)
	b.WriteString(strings.Join(e.Problems, "; "))
	if e.More > 0 {
		fmt.Fprintf(&b, "; and %d more", e.More)
	}
	return b.String()
}

// Unwrap makes errors.Is(err, ErrInvalidDataset) true.
func (e *ValidationError) Unwrap() error { return ErrInvalidDataset }

// ParseDataset decodes and validates a dataset. Unknown fields, trailing data
// and any validation problem reject the whole document.
func ParseDataset(data []byte) (*Dataset, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var ds Dataset
	if err := dec.Decode(&ds); err != nil {
		return nil, fmt.Errorf("%w: decode json: %w", ErrInvalidDataset, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: unexpected data after the json document", ErrInvalidDataset)
	}
	if err := ds.Validate(); err != nil {
		return nil, err
	}
	return &ds, nil
}

var (
	reSessionID  = regexp.MustCompile(`^general_assembly_([1-9][0-9]{0,3})(_special_[1-9][0-9]?)?$`)
	reCmteLPID   = regexp.MustCompile(`^cmte_[hs]_[a-z0-9_]+_[0-9]+$`)
	reMemberLPID = regexp.MustCompile(`^(rep|sen)_[a-z0-9_]+_[0-9]+$`)
	reBillNumber = regexp.MustCompile(`^(hb|sb|hr|sr|hcr|scr|hjr|sjr)([1-9][0-9]{0,4})$`)
	reVersionID  = regexp.MustCompile(`^[A-Z]{1,4}$`)
	reFormatted  = regexp.MustCompile(`^[0-9]{2}$`)
	reSessionDay = regexp.MustCompile(`^day([0-9]{3})_([hs])_([0-9]{8})$`)
	reTime       = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)
	reSafeID     = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// validator collects problems with their JSON paths.
type validator struct {
	problems []string
	more     int
}

func (v *validator) addf(path, format string, args ...any) {
	if len(v.problems) >= maxProblems {
		v.more++
		return
	}
	v.problems = append(v.problems, path+": "+fmt.Sprintf(format, args...))
}

func (v *validator) date(path, s string) {
	if !isDate(s) {
		v.addf(path, "%q is not a date (YYYY-MM-DD)", s)
	}
}

func (v *validator) chamber(path, s string) {
	if s != "House" && s != "Senate" {
		v.addf(path, "%q is not a chamber (House or Senate)", s)
	}
}

// uniqueID checks that id has the form re matches (what describes it) and is not already in
// seen, then adds it to seen.
func (v *validator) uniqueID(path, id string, re *regexp.Regexp, what string, seen map[string]bool) {
	if !re.MatchString(id) {
		v.addf(path, "%q is not %s", id, what)
	} else if seen[id] {
		v.addf(path, "%q appears more than once", id)
	}
	seen[id] = true
}

func (v *validator) nonEmpty(path, s string) {
	if strings.TrimSpace(s) == "" {
		v.addf(path, "must not be empty")
	}
}

// isDate reports whether s is a real date YYYY-MM-DD. Years start at 0001, as Python's
// datetime.date (and so Django's and DRF's date handling) has them: Go's proleptic calendar
// would take 0000-02-29.
func isDate(s string) bool {
	if len(s) != 10 {
		return false
	}
	t, err := time.Parse(time.DateOnly, s)
	return err == nil && t.Year() >= 1
}

// Validate checks the whole dataset and returns a *ValidationError listing
// every problem found (up to a cap), or nil.
func (ds *Dataset) Validate() error {
	v := &validator{}
	if len(ds.Sessions) == 0 {
		v.addf("sessions", "at least one session is required")
	}
	seen := make(map[string]bool, len(ds.Sessions))
	for i := range ds.Sessions {
		s := &ds.Sessions[i]
		p := fmt.Sprintf("sessions[%d]", i)
		v.uniqueID(p+".id", s.ID, reSessionID, "general_assembly_<N> or general_assembly_<N>_special_<K>", seen)
		v.date(p+".start", s.Start)
		v.date(p+".end", s.End)
		if isDate(s.Start) && isDate(s.End) && s.End < s.Start {
			v.addf(p+".end", "%s is before start %s", s.End, s.Start)
		}
		special := strings.Contains(s.ID, "_special_")
		switch s.Type {
		case typeRegular:
			if special {
				v.addf(p+".type", "a _special_ id must have type %q", typeSpecial)
			}
		case typeSpecial:
			if !special {
				v.addf(p+".type", "type %q needs an id ending _special_<K>", typeSpecial)
			}
		default:
			v.addf(p+".type", "%q is not %q or %q", s.Type, typeRegular, typeSpecial)
		}
		validateSession(v, p, s)
	}
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems, More: v.more}
}

const (
	typeRegular = "Regular Session"
	typeSpecial = "Special Session"
)

func validateSession(v *validator, p string, s *Session) {
	cmtes := make(map[string]bool, len(s.Committees))
	for i, c := range s.Committees {
		cp := fmt.Sprintf("%s.committees[%d]", p, i)
		v.uniqueID(cp+".lpid", c.LPID, reCmteLPID, "cmte_<h|s>_<slug>_<n>", cmtes)
		v.nonEmpty(cp+".name", c.Name)
		v.chamber(cp+".chamber", c.Chamber)
		if reCmteLPID.MatchString(c.LPID) && (c.Chamber == "House") != strings.HasPrefix(c.LPID, "cmte_h_") {
			v.addf(cp+".chamber", "%q does not match lpid %q", c.Chamber, c.LPID)
		}
	}

	bills := make(map[string]bool, len(s.Legislation))
	for _, b := range s.Legislation {
		bills[b.Number] = true
	}

	meetings := make(map[string]bool, len(s.Meetings))
	for i, m := range s.Meetings {
		mp := fmt.Sprintf("%s.meetings[%d]", p, i)
		v.uniqueID(mp+".meeting_id", m.MeetingID, reSafeID, "a meeting id", meetings)
		if !cmtes[m.CmteLPID] {
			v.addf(mp+".cmte_lpid", "%q is not a committee of this session", m.CmteLPID)
		}
		v.date(mp+".meeting_date", m.MeetingDate)
		if !reTime.MatchString(m.MeetingTime) {
			v.addf(mp+".meeting_time", "%q is not HH:MM", m.MeetingTime)
		}
		for j, a := range m.Agenda {
			if a.BillNo != "" && !bills[a.BillNo] {
				v.addf(fmt.Sprintf("%s.agenda[%d].billno", mp, j), "%q is not legislation of this session", a.BillNo)
			}
		}
	}

	days := make(map[string]bool, len(s.LegislativeDays))
	for i, d := range s.LegislativeDays {
		dp := fmt.Sprintf("%s.legislative_days[%d]", p, i)
		if days[d.SessionDay] {
			v.addf(dp+".session_day", "%q appears more than once", d.SessionDay)
		}
		days[d.SessionDay] = true
		v.chamber(dp+".chamber", d.Chamber)
		v.date(dp+".date", d.Date)
		checkSessionDay(v, dp+".session_day", d.SessionDay, d.Chamber, d.Date)
		if n, err := sessionDayNumber(d.SessionDay); err == nil && n != d.DayNumber {
			v.addf(dp+".day_number", "%d does not match session_day %q", d.DayNumber, d.SessionDay)
		}
	}

	for i, j := range s.Journals {
		jp := fmt.Sprintf("%s.journals[%d]", p, i)
		v.chamber(jp+".chamber", j.Chamber)
		v.date(jp+".date", j.Date)
		v.nonEmpty(jp+".journal_day", j.JournalDay)
		checkSessionDay(v, jp+".session_day", j.SessionDay, j.Chamber, j.Date)
		if !days[j.SessionDay] {
			v.addf(jp+".session_day", "%q is not a legislative day of this session", j.SessionDay)
		}
	}

	for i, c := range s.Calendars {
		cp := fmt.Sprintf("%s.calendars[%d]", p, i)
		v.chamber(cp+".chamber", c.Chamber)
		v.date(cp+".date", c.Date)
		checkSessionDay(v, cp+".session_day", c.SessionDay, c.Chamber, c.Date)
		for k, it := range c.Items {
			if !bills[it.Number] {
				v.addf(fmt.Sprintf("%s.items[%d].number", cp, k), "%q is not legislation of this session", it.Number)
			}
		}
	}

	members := make(map[string]bool, len(s.Legislators))
	for i, l := range s.Legislators {
		lp := fmt.Sprintf("%s.legislators[%d]", p, i)
		v.uniqueID(lp+".lpid", l.LPID, reMemberLPID, "rep_<last>_<first>_<n> or sen_<last>_<first>_<n>", members)
		v.nonEmpty(lp+".displayname", l.DisplayName)
		v.chamber(lp+".chamber", l.Chamber)
	}

	seenBill := make(map[string]bool, len(s.Legislation))
	for i := range s.Legislation {
		validateBill(v, fmt.Sprintf("%s.legislation[%d]", p, i), &s.Legislation[i], seenBill, cmtes)
	}
}

func checkSessionDay(v *validator, path, key, chamber, date string) {
	m := reSessionDay.FindStringSubmatch(key)
	if m == nil {
		v.addf(path, "%q is not day<NNN>_<h|s>_<YYYYMMDD>", key)
		return
	}
	if (m[2] == "h") != (chamber == "House") {
		v.addf(path, "%q does not match chamber %q", key, chamber)
	}
	if m[3] != strings.ReplaceAll(date, "-", "") {
		v.addf(path, "%q does not match date %q", key, date)
	}
}

func sessionDayNumber(key string) (int, error) {
	m := reSessionDay.FindStringSubmatch(key)
	if m == nil {
		return 0, fmt.Errorf("legislative: bad session day %q", key)
	}
	return strconv.Atoi(m[1])
}

func validateBill(v *validator, p string, b *Bill, seen map[string]bool, cmtes map[string]bool) {
	v.uniqueID(p+".number", b.Number, reBillNumber, "a bill number such as hb602", seen)
	if len(b.Versions) == 0 {
		v.addf(p+".versions", "a bill needs at least one version")
	}
	codes := make(map[string]bool, len(b.Versions))
	prev := ""
	for i, ver := range b.Versions {
		vp := fmt.Sprintf("%s.versions[%d]", p, i)
		if !reFormatted.MatchString(ver.FormattedVersion) {
			v.addf(vp+".formatted_version", "%q is not two digits", ver.FormattedVersion)
		} else if ver.FormattedVersion <= prev {
			v.addf(vp+".formatted_version", "%q is not after the previous version %q", ver.FormattedVersion, prev)
		}
		prev = ver.FormattedVersion
		if !reVersionID.MatchString(ver.VersionID) {
			v.addf(vp+".version_id", "%q is not a version code such as IN", ver.VersionID)
		}
		code := ver.FormattedVersion + "_" + ver.VersionID
		if codes[code] {
			v.addf(vp, "version %q appears more than once", code)
		}
		codes[code] = true
		v.nonEmpty(vp+".name", ver.Name)
		v.chamber(vp+".chamber", ver.Chamber)
		v.nonEmpty(vp+".version", ver.Version)
		v.nonEmpty(vp+".type", ver.Type)
		for _, d := range []struct {
			name string
			val  *string
		}{{"governor_signed_date", ver.GovernorSignedDate}, {"concurrence_date", ver.ConcurrenceDate}, {"effective_date", ver.EffectiveDate}} {
			if d.val != nil {
				v.date(vp+"."+d.name, *d.val)
			}
		}
		for k, m := range append(append([]Member(nil), ver.Sponsors...), ver.Cosponsors...) {
			mp := fmt.Sprintf("%s.sponsors+cosponsors[%d]", vp, k)
			v.chamber(mp+".chamber", m.Chamber)
			if !reMemberLPID.MatchString(m.MemberLPID) {
				v.addf(mp+".member_lpid", "%q is not rep_<last>_<first>_<n> or sen_<last>_<first>_<n>", m.MemberLPID)
			}
		}
	}
	for i, a := range b.Actions {
		ap := fmt.Sprintf("%s.actions[%d]", p, i)
		if _, err := time.Parse(time.RFC3339, a.Occurred); err != nil {
			v.addf(ap+".occurred", "%q is not an RFC 3339 time with offset", a.Occurred)
		}
		v.chamber(ap+".chamber", a.Chamber)
		v.nonEmpty(ap+".action", a.Action)
		if a.SessionDay != "" && !reSessionDay.MatchString(a.SessionDay) {
			v.addf(ap+".session_day", "%q is not day<NNN>_<h|s>_<YYYYMMDD>", a.SessionDay)
		}
		if a.CmteLPID != "" && !cmtes[a.CmteLPID] {
			v.addf(ap+".cmte_lpid", "%q is not a committee of this session", a.CmteLPID)
		}
	}
	ams := make(map[string]bool, len(b.Amendments))
	for i, a := range b.Amendments {
		ap := fmt.Sprintf("%s.amendments[%d]", p, i)
		v.uniqueID(ap+".amendment_id", a.AmendmentID, reSafeID, "an amendment id", ams)
		v.chamber(ap+".chamber", a.Chamber)
		v.date(ap+".offered", a.Offered)
		if a.CmteLPID != "" && !cmtes[a.CmteLPID] {
			v.addf(ap+".cmte_lpid", "%q is not a committee of this session", a.CmteLPID)
		}
	}
}
