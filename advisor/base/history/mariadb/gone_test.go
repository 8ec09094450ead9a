//go:build mariadb

package mariadb

import (
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/migadvisor/migadvisor/slurm/sacctgen"
)

// proxy forwards TCP connections to the server until it is closed; then
// the server is gone for its clients, as a stopped one is: their
// connections drop and new ones are refused.
type proxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, s)
			p.mu.Unlock()
			go func() { io.Copy(s, c); s.Close() }()
			go func() { io.Copy(c, s); c.Close() }()
		}
	}()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) port() int { return p.ln.Addr().(*net.TCPAddr).Port }

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// The server gone in the middle of a collect: the import goes on and
// keeps every job, the collect ends with one sentence naming the store, and
// once the server is back the next push completes it.
func TestMariaDBServerGoneMidCollect(t *testing.T) {
	ctx := context.Background()
	opt := testStore(t)
	p := startProxy(t, "127.0.0.1:3306")
	viaProxy := opt
	viaProxy.Host, viaProxy.Port, viaProxy.Socket = "127.0.0.1", p.port(), ""
	store, err := Open(ctx, viaProxy)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	h, path := collectorHistory(t, store, 0)
	_, err = store.PushWhile(ctx, h, func() error {
		for step := range 4 {
			if step == 2 {
				p.close()
			}
			importJobs(t, h, sacctgen.FirstJobID+step*10000, 10000)
		}
		return nil
	}, nil)
	if err == nil || !strings.Contains(err.Error(), "site store "+opt.User+"@127.0.0.1:"+strconv.Itoa(p.port())) {
		t.Fatalf("the server gone: %v", err)
	}
	if n := len(sqliteText(t, path)["jobs"]); n != 40000 {
		t.Fatalf("the collector's history holds %d jobs, want all 40000", n)
	}
	back, err := Open(ctx, opt)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if _, err := back.Push(ctx, h, nil); err != nil {
		t.Fatalf("the next push: %v", err)
	}
	sameTables(t, "once the server is back", tableText(t, back.DB(), quote), sqliteText(t, path))
}
