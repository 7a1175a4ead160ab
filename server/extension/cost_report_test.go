package extension

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestCostReportMarshalsAsTheMap: extensions.cost and the extensions
// around it are written byte for byte as json.Marshal wrote the maps they
// replace, whichever members the report has.
func TestCostReportMarshalsAsTheMap(t *testing.T) {
	for _, c := range []costReport{
		{requested: 650},
		{requested: 650, limit: 5000},
		{requested: 10, remaining: 0, rated: true},
		{requested: 10, limit: 5000, remaining: -3, rated: true},
		{requested: 12345, limit: 1, remaining: 9999, rated: true},
	} {
		m := map[string]any{"requested": c.requested}
		if c.limit > 0 {
			m["limit"] = c.limit
		}
		if c.rated {
			m["remaining"] = c.remaining
		}
		want, _ := json.Marshal(map[string]any{"cost": m, "z<&>": []int{1}, "a": "x\u2028", "": nil})
		var got bytes.Buffer
		writeExtensions(&got, map[string]any{"cost": c, "z<&>": []int{1}, "a": "x\u2028", "": nil})
		if got.String() != string(want) {
			t.Errorf("%+v: wrote %s, json.Marshal of the map %s", c, got.String(), want)
		}
		alone, _ := json.Marshal(c)
		mapAlone, _ := json.Marshal(m)
		if string(alone) != string(mapAlone) {
			t.Errorf("%+v: marshals to %s, the map to %s", c, alone, mapAlone)
		}
	}
}
