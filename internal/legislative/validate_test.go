package legislative_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mapfarm/mapfarm/internal/legislative"
)

// Every id of the dataset is checked for its form and for being the only one of its kind: a
// malformed id and a repeated one are each reported at their JSON path, and nothing else is.
func TestValidateIDs(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "full_dataset.json"))
	if err != nil {
		t.Fatal(err)
	}
	ds, err := legislative.ParseDataset(data)
	if err != nil {
		t.Fatalf("the test dataset is not valid: %v", err)
	}
	s := &ds.Sessions[0]
	ds.Sessions[2].ID, ds.Sessions[2].Type = ds.Sessions[1].ID, ds.Sessions[1].Type
	s.Committees = append(s.Committees, legislative.Committee{LPID: "committee_1", Name: "Rules", Chamber: "House"}, s.Committees[0])
	s.Legislators = append(s.Legislators, s.Legislators[1])
	s.Meetings[0].MeetingID = "a meeting"
	s.Legislation[1].Number = s.Legislation[0].Number
	want := []string{
		`sessions[0].committees[2].lpid: "committee_1" is not cmte_<h|s>_<slug>_<n>`,
		`sessions[0].committees[3].lpid: "` + s.Committees[0].LPID + `" appears more than once`,
		`sessions[0].meetings[0].meeting_id: "a meeting" is not a meeting id`,
		`sessions[0].legislators[2].lpid: "` + s.Legislators[1].LPID + `" appears more than once`,
		`sessions[0].legislation[1].number: "` + s.Legislation[0].Number + `" appears more than once`,
		`sessions[2].id: "general_assembly_139_special_2" appears more than once`,
	}
	var ve *legislative.ValidationError
	if err := ds.Validate(); !errors.As(err, &ve) {
		t.Fatalf("Validate() = %v, want a *ValidationError", err)
	}
	if !slices.Equal(ve.Problems, want) {
		t.Errorf("problems:\n%q\nwant:\n%q", ve.Problems, want)
	}
}
