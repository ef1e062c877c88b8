package legislative

// This file holds the dataset as it is stored and imported (JSON). Links,
// display names and derived collections are not stored: they are computed
// when a dataset is compiled into a snapshot (see snapshot.go), so a dataset
// cannot contain a link that disagrees with its own ids.

// Dataset is the whole body of data the API serves. It is imported as one JSON
// document and replaced as a whole.
type Dataset struct {
	Sessions []Session `json:"sessions"`
}

// Session is one general assembly session (regular or special) and the data
// of its sub-collections.
type Session struct {
	// ID is general_assembly_<N> or general_assembly_<N>_special_<K>.
	ID string `json:"id"`
	// Start and End are dates (YYYY-MM-DD); End is not before Start.
	Start string `json:"start"`
	End   string `json:"end"`
	// Type is "Regular Session" or "Special Session".
	Type string `json:"type"`

	Committees      []Committee      `json:"committees,omitempty"`
	Meetings        []Meeting        `json:"meetings,omitempty"`
	Journals        []Journal        `json:"journals,omitempty"`
	Legislation     []Bill           `json:"legislation,omitempty"`
	Legislators     []Legislator     `json:"legislators,omitempty"`
	Calendars       []Calendar       `json:"calendars,omitempty"`
	LegislativeDays []LegislativeDay `json:"legislative_days,omitempty"`
}

// Committee is a standing or select committee of one chamber.
type Committee struct {
	LPID    string `json:"lpid"` // cmte_h_<slug>_<n> or cmte_s_<slug>_<n>
	Name    string `json:"name"`
	Chamber string `json:"chamber"` // House or Senate
}

// Meeting is one committee meeting. Its chamber and committee name come from
// the committee it belongs to.
type Meeting struct {
	MeetingID   string       `json:"meeting_id"` // <cmte_lpid>_<YYYY-MM-DD>-<HHMM>_<n>
	CmteLPID    string       `json:"cmte_lpid"`
	MeetingDate string       `json:"meeting_date"` // YYYY-MM-DD
	MeetingTime string       `json:"meeting_time"` // HH:MM, 24-hour
	Location    string       `json:"location"`
	Canceled    bool         `json:"canceled"`
	Agenda      []AgendaItem `json:"agenda"`
}

// AgendaItem is one item on a meeting's agenda. BillNo, when set, names a bill
// of the same session (for example hb602).
type AgendaItem struct {
	Headline        string `json:"headline"`
	BillNo          string `json:"billno"`
	ProposedSponsor string `json:"proposed_sponsor"`
}

// Journal is the journal of one chamber for one legislative day.
type Journal struct {
	Chamber    string `json:"chamber"`
	Date       string `json:"date"`
	JournalDay string `json:"journal_day"` // e.g. "TWENTY-FOURTH DAY"
	SessionDay string `json:"session_day"` // day<NNN>_<h|s>_<YYYYMMDD>
}

// Bill is one piece of legislation with all its versions, in order (the
// first is the version as introduced).
type Bill struct {
	Number     string        `json:"number"` // e.g. hb602
	Versions   []BillVersion `json:"versions"`
	Actions    []Action      `json:"actions,omitempty"`
	Amendments []Amendment   `json:"amendments,omitempty"`
}

// BillVersion is one version of a bill. Its fields are those of the live
// API's version object, less the number and the links.
type BillVersion struct {
	versionHead
	Sponsors   []Member  `json:"sponsors"`
	Cosponsors []Member  `json:"cosponsors"`
	Subjects   []Subject `json:"subjects"`
	BudgetType string    `json:"budget_type"`
	Type       string    `json:"type"` // Bill, Resolution, ...
}

// versionHead is the first part of a version object, which the live API
// follows with the bill's number and links (versionOut) before the sponsors.
type versionHead struct {
	APN                  string  `json:"apn"`
	Revno                int64   `json:"revno"`
	Name                 string  `json:"name"`
	Chamber              string  `json:"chamber"`
	ShortTitle           string  `json:"short_title"`
	Version              string  `json:"version"`
	LongTitle            string  `json:"long_title"`
	LocalImpactStatement string  `json:"local_impact_statement"`
	GovernorSignedDate   *string `json:"governor_signed_date"`
	ConcurrenceDate      *string `json:"concurrence_date"`
	EffectiveDate        *string `json:"effective_date"`
	EffectiveDateNotes   string  `json:"effective_date_notes"`
	VersionID            string  `json:"version_id"`        // e.g. IN, RH, PH, EN
	FormattedVersion     string  `json:"formatted_version"` // two digits, e.g. 00
}

// Member is a sponsor or cosponsor as embedded in a bill version.
type Member struct {
	Chamber    string `json:"chamber"`
	FirstName  string `json:"first_name"`
	LastName   string `json:"last_name"`
	FullName   string `json:"full_name"`
	District   string `json:"district"`
	MemberID   int64  `json:"member_id"`
	MemberLPID string `json:"member_lpid"`
	Active     bool   `json:"active"`
	Party      string `json:"party"`
}

// Subject is a subject-index pair.
type Subject struct {
	Primary   string `json:"primary"`
	Secondary string `json:"secondary"`
}

// Action is one step in a bill's history. The vote fields are set only on
// roll-call actions and are left out of the response otherwise.
type Action struct {
	Occurred    string    `json:"occurred"` // RFC 3339 with offset
	Chamber     string    `json:"chamber"`
	Action      string    `json:"action"`
	Description string    `json:"description"`
	SessionDay  string    `json:"session_day"`
	CmteLPID    string    `json:"cmte_lpid"`
	CmteName    string    `json:"cmte_name"`
	Committee   string    `json:"committee"`
	Yeas        *[]string `json:"yeas,omitempty"`
	Nays        *[]string `json:"nays,omitempty"`
	Result      *string   `json:"result,omitempty"`
	Amended     *bool     `json:"amended,omitempty"`
	Revno       *int64    `json:"revno,omitempty"`
}

// Amendment is an amendment offered to a bill.
type Amendment struct {
	AmendmentID string `json:"amendment_id"`
	Chamber     string `json:"chamber"`
	Offered     string `json:"offered"` // YYYY-MM-DD
	CmteLPID    string `json:"cmte_lpid"`
	Result      string `json:"result"`
	Description string `json:"description"`
}

// Legislator is a member of the general assembly in one session.
type Legislator struct {
	LPID        string `json:"lpid"` // rep_<last>_<first>_<n> or sen_<last>_<first>_<n>
	DisplayName string `json:"displayname"`
	MemberID    int64  `json:"member_id"`
	Chamber     string `json:"chamber"`
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	FullName    string `json:"full_name"`
	District    string `json:"district"`
	Party       string `json:"party"`
	Active      bool   `json:"active"`
}

// Calendar is one chamber's calendar for one legislative day.
type Calendar struct {
	Chamber    string         `json:"chamber"`
	Date       string         `json:"date"`
	SessionDay string         `json:"session_day"`
	Items      []CalendarItem `json:"items"`
}

// CalendarItem is one matter on a calendar.
type CalendarItem struct {
	Number string `json:"number"` // a bill of the same session
	Name   string `json:"name"`
	Action string `json:"action"` // e.g. "Third Consideration"
}

// LegislativeDay is a day on which a chamber is in session.
type LegislativeDay struct {
	SessionDay string `json:"session_day"` // day<NNN>_<h|s>_<YYYYMMDD>
	Chamber    string `json:"chamber"`
	Date       string `json:"date"`
	DayNumber  int    `json:"day_number"`
}
