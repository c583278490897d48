package middle

import (
	"testing"
)

// The mark a commit's read looks at first reads no row of a table: counts
// and newest rowids are answered from each b-tree (SQLite's Count, and a
// seek to the last row), so a commit costs one scan of the workflows, the
// one past the watermark, not two. Its program starts no scan of a table
// at its first row (Rewind) and decodes no column (Column); it counts each
// table by its b-tree (Count).
func TestTheMarkReadsNoRow(t *testing.T) {
	h := newHome(t)
	for _, events := range []bool{true, false} {
		rows, err := h.writer.Query(`EXPLAIN ` + markQuery(events))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var ops []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			ops = append(ops, vals[1].(string))
		}
		rows.Close()
		counts := 0
		for _, op := range ops {
			switch op {
			case "Rewind", "Column":
				t.Errorf("events %v: the mark's program reads rows (%s): %v", events, op, ops)
			case "Count":
				counts++
			}
		}
		if want := map[bool]int{true: 2, false: 1}[events]; counts != want {
			t.Errorf("events %v: %d b-tree counts, want %d: %v", events, counts, want, ops)
		}
	}
}
