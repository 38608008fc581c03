package tracking

import (
	"bytes"
	"strings"
	"testing"
)

func TestWriteTree(t *testing.T) {
	g := treeGroup()
	var buf bytes.Buffer
	if err := WriteTree(&buf, &g, nil); err != nil {
		t.Fatal(err)
	}
	want := `prompt "3 4 7 → 21" · entropy_tree · 9 generated + 5 prefill tokens of 100
└─ node 0 (it 0) [1 2 3 4] ⇒ reward 0 (wrong) "r"
   └─ @2 H=0.300 node 1 (it 1) [5 6 7] ⇒ reward 1 (exact) "a"
      └─ @1 H=0.600 node 2 (it 1) [8 9] ⇒ reward 1 (exact) "b\t\"q\""
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	flat := flatGroup(5, 2, 2)
	buf.Reset()
	WriteTree(&buf, &flat, func(tokens []int) string { return strings.Repeat("x", len(tokens)) })
	if got := buf.String(); !strings.Contains(got, "├─ node 0 (it 0) \"xx\"") || !strings.Contains(got, "└─ node 1") || !strings.Contains(got, "filtered") {
		t.Errorf("flat group:\n%s", got)
	}
}
