package session

import "testing"

func TestCloseNames(t *testing.T) {
	names := []string{"fs__read_file", "fs__write_file", "git__git_status", "slack__post_message"}
	tests := []struct {
		name string
		want string
	}{
		{"read_fiel", "fs__read_file"},
		{"writeFile", "fs__write_file"},
		{"git_stauts", "git__git_status"},
	}
	for _, tt := range tests {
		got := CloseNames(tt.name, names, 3)
		if len(got) == 0 || got[0] != tt.want {
			t.Errorf("CloseNames(%q) = %v, want %s first", tt.name, got, tt.want)
		}
	}
	if got := CloseNames("qqqqzzzz", names, 3); len(got) != 0 {
		t.Errorf("CloseNames(nonsense) = %v, want none", got)
	}
}
