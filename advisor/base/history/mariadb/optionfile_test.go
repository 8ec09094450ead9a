package mariadb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func optionFile(t *testing.T, text string, mode os.FileMode) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "store.cnf")
	if err := os.WriteFile(file, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(file, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return file
}

// The groups every client reads, then [migadvisor], which wins; quoted
// values unescaped; comments and other groups left alone.
func TestReadOptionFile(t *testing.T) {
	file := optionFile(t, `# the collector's
[mysql]
user = not-this-one
[client]
user = reader
password = "se#cret \"x\"" # a comment
host = db.example.org
no-beep
[migadvisor]
user = collector
port = 3307
database = site_history
`, 0o600)
	got, err := ReadOptionFile(file)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{File: file, Host: "db.example.org", Port: 3307, User: "collector", Password: `se#cret "x"`, Database: "site_history"}
	if got != want {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if w := got.where(); w != "collector@db.example.org:3307/site_history" {
		t.Errorf("where: %q", w)
	}
	for raw, want := range map[string]string{
		`abc#def`: "abc", `abc #def`: "abc", "abc\t# def": "abc", `a\\b`: `a\b`, `a\sb`: "a b",
		`"se#cret \"x\""  # c`: `se#cret "x"`, `'it''s'`: `it''s`, `ab'c#d`: `ab'c#d`, `""`: "",
	} {
		if got := optionValue(raw); got != want {
			t.Errorf("value %s: %q, want %q", raw, got, want)
		}
	}
	local, err := ReadOptionFile(optionFile(t, "[client]\nuser=u\nsocket=/tmp/my.sock\n", 0o600))
	if err != nil || local.Database != DefaultDatabase || local.config().Net != "unix" || local.config().Addr != "/tmp/my.sock" {
		t.Errorf("local server: %+v, %v", local, err)
	}
}

// Each thing wrong with the file is one sentence naming it, and its line
// where it has one.
func TestOptionFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		mode       os.FileMode
		want       string
	}{
		{"readable by the group", "[client]\nuser = u\n", 0o640, "must be readable by its owner alone (it is 0640): chmod 600"},
		{"no user", "[client]\npassword = p\n", 0o600, "no user in [client] or [migadvisor]"},
		{"unknown option of ours", "[migadvisor]\nuser = u\nhots = h\n", 0o600, `:3: unknown option "hots"`},
		{"bad port", "[client]\nuser = u\nport = 33o6\n", 0o600, `:3: port "33o6" is not a port number`},
		{"include", "!include /etc/my.cnf\n", 0o600, ":1: !include is not read here"},
		{"no equals sign", "[client]\nuser = u\npassword S3cret\n", 0o600, ":3: not an option line (name = value)"},
		{"header", "[client\n", 0o600, ":1: a group header needs a closing ']'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := optionFile(t, tc.text, tc.mode)
			_, err := ReadOptionFile(file)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), file) {
				t.Errorf("error %v, want %q and the file", err, tc.want)
			}
		})
	}
	if _, err := ReadOptionFile(filepath.Join(t.TempDir(), "none.cnf")); err == nil || !strings.Contains(err.Error(), "none.cnf") {
		t.Errorf("a missing file: %v", err)
	}
}
