package mariadb

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Options are what a connection to the site store needs, read from a MySQL
// option file: the format MariaDB's and MySQL's own clients read
// (~/.my.cnf), so that the admin keeps the password where those tools
// already look for it, readable by the admin alone, and never on a command
// line, in the environment of a user's process or in the world-readable
// site file.
type Options struct {
	File     string // the option file, for messages
	Host     string // "" or "localhost": the local server, through Socket
	Port     int    // 0: 3306
	Socket   string // the server's Unix socket, for the local server
	User     string
	Password string
	Database string // default "migadvisor"
}

// optionGroups are the groups read, in order (a later one wins): every
// client's, then migadvisor's own.
var optionGroups = []string{"client", "client-server", "client-mariadb", "migadvisor"}

// DefaultDatabase is the database of a site store whose option file names none.
const DefaultDatabase = "migadvisor"

// ReadOptionFile reads the connection options from file. It refuses a file
// that users other than its owner may read (it holds a password), and
// names the line of anything it cannot read. In the [migadvisor] group an
// option it does not know is an error; in the groups every client reads
// (mysql's --no-beep, say) it is left to the others.
func ReadOptionFile(file string) (Options, error) {
	opt := Options{File: file}
	info, err := os.Stat(file)
	if err != nil {
		return opt, fmt.Errorf("site store option file: %w", err)
	}
	if info.Mode().Perm()&0o077 != 0 {
		return opt, fmt.Errorf("%s: the site store's option file holds its password, so it must be readable by its owner alone (it is %04o): chmod 600 %s",
			file, info.Mode().Perm(), file)
	}
	f, err := os.Open(file)
	if err != nil {
		return opt, fmt.Errorf("site store option file: %w", err)
	}
	defer f.Close()
	group := ""
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		switch {
		case text == "" || text[0] == '#' || text[0] == ';':
			continue
		case strings.HasPrefix(text, "!include"):
			return opt, fmt.Errorf("%s:%d: !include is not read here: put the options in this file", file, line)
		case text[0] == '[':
			end := strings.IndexByte(text, ']')
			if end < 0 {
				return opt, fmt.Errorf("%s:%d: a group header needs a closing ']'", file, line)
			}
			group = strings.ToLower(strings.TrimSpace(text[1:end]))
			continue
		}
		if !isRead(group) {
			continue
		}
		if err := opt.set(text, group == "migadvisor"); err != nil {
			return opt, fmt.Errorf("%s:%d: %w", file, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return opt, fmt.Errorf("site store option file %s: %w", file, err)
	}
	if opt.User == "" {
		return opt, fmt.Errorf("%s: no user in [client] or [migadvisor]", file)
	}
	if opt.Database == "" {
		opt.Database = DefaultDatabase
	}
	return opt, nil
}

func isRead(group string) bool {
	for _, g := range optionGroups {
		if g == group {
			return true
		}
	}
	return false
}

// set applies one "name = value" line; strict refuses a name it does not know.
func (o *Options) set(text string, strict bool) error {
	name, raw, hasValue := strings.Cut(text, "=")
	name = strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "_", "-")
	if strings.ContainsAny(name, " \t") {
		return fmt.Errorf("not an option line (name = value)")
	}
	value := optionValue(raw)
	target := map[string]*string{"host": &o.Host, "socket": &o.Socket, "user": &o.User, "password": &o.Password, "database": &o.Database}
	if p, ok := target[name]; ok {
		if !hasValue {
			return fmt.Errorf("%s needs a value", name)
		}
		*p = value
		return nil
	}
	if name == "port" {
		port, err := strconv.Atoi(value)
		if err != nil || port <= 0 || port > 65535 {
			return fmt.Errorf("port %q is not a port number", value)
		}
		o.Port = port
		return nil
	}
	if strict {
		return fmt.Errorf("unknown option %q (migadvisor reads host, port, socket, user, password and database)", name)
	}
	return nil
}

// optionValue reads a value as MySQL's clients do (mysys's my_default.c):
// a '#' outside quotes starts a comment (a quote left open leaves the rest
// as it is); quotes around the whole value go; and the escapes \b \t \n
// \r \s \\ stand for their characters, quoted or not.
func optionValue(v string) string {
	var quote byte
	end := len(v)
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\':
			i++
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote = c
		case quote == 0 && c == '#':
			end = i
		}
		if end < len(v) {
			break
		}
	}
	v = strings.TrimSpace(v[:end])
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		if r, ok := map[byte]byte{'b': '\b', 't': '\t', 'n': '\n', 'r': '\r', 's': ' ', '\\': '\\', '\'': '\'', '"': '"'}[v[i]]; ok {
			b.WriteByte(r)
		} else {
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}
