package store

import "testing"

func TestRebind(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"SELECT 1", "SELECT 1"},
		{"SELECT * FROM t WHERE id = ?", "SELECT * FROM t WHERE id = $1"},
		{"VALUES (?, ?, ?)", "VALUES ($1, $2, $3)"},
		{"?", "$1"},
		{"a ? b ? c ? d ? e ? f ? g ? h ? i ? j ? k", "a $1 b $2 c $3 d $4 e $5 f $6 g $7 h $8 i $9 j $10 k"},
	} {
		if got := Rebind(tt.in); got != tt.want {
			t.Errorf("Rebind(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
