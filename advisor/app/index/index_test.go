package index

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func entriesOf(n int, tag string) map[Key][]byte {
	m := map[Key][]byte{}
	for i := range n {
		m[KeyOf("fp", fmt.Sprint(i))] = []byte(fmt.Sprintf(`{"runs":[],"tag":%q,"i":%d}`, tag, i))
	}
	return m
}

// Every key written is found with its payload; a key not written is not.
func TestWriteAndGet(t *testing.T) {
	path := filepath.Join(t.TempDir(), IndexName)
	want := entriesOf(1000, "a")
	if err := WriteFile(path, want); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.Len() != 1000 {
		t.Errorf("%d entries", r.Len())
	}
	for k, p := range want {
		got, ok, err := r.Get(k)
		if err != nil || !ok || !bytes.Equal(got, p) {
			t.Fatalf("%x: %q %v %v, want %q", k, got, ok, err, p)
		}
	}
	if _, ok, err := r.Get(KeyOf("fp", "absent")); ok || err != nil {
		t.Errorf("an absent key: %v %v", ok, err)
	}
	if info, _ := os.Stat(path); info.Mode().Perm() != 0o644 {
		t.Errorf("mode %v: readers on every login node read it", info.Mode().Perm())
	}
}

// A truncated, overwritten, corrupt or newer index is refused, saying
// which file and why; a corrupt entry is refused alone.
func TestDamagedIndexes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.idx")
	if err := WriteFile(good, entriesOf(10, "a")); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(good)
	damaged := map[string][]byte{
		"truncated": data[:len(data)-7],
		"empty":     nil,
		"not":       []byte("SQLite format 3\x00 and more bytes than a header has, surely"),
		"newer":     append(append(append([]byte{}, data[:8]...), Version+1, 0, 0, 0), data[12:]...),
		"zero":      append(append(append([]byte{}, data[:8]...), 0, 0, 0, 0), data[12:]...),
	}
	for name, d := range damaged {
		path := filepath.Join(dir, name+".idx")
		os.WriteFile(path, d, 0o644)
		if _, err := Open(path); !errors.Is(err, ErrNotIndex) || !bytes.Contains([]byte(err.Error()), []byte(path)) {
			t.Errorf("%s: %v", name, err)
		}
	}
	corrupt := append([]byte{}, data...)
	corrupt[len(corrupt)-3] ^= 0xff // inside the last payload
	path := filepath.Join(dir, "corrupt.idx")
	os.WriteFile(path, corrupt, 0o644)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bad := 0
	for k := range entriesOf(10, "a") {
		if _, _, err := r.Get(k); err != nil {
			if !errors.Is(err, ErrNotIndex) {
				t.Errorf("%v", err)
			}
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d entries refused, want the corrupt one", bad)
	}

	// An entry whose length runs past the file is refused before anything
	// that long is read (a wrapper must not try to allocate 4 GiB).
	huge := append([]byte{}, data...)
	huge[headerSize+24+3] = 0xff // the first entry's length, most significant byte
	path = filepath.Join(dir, "huge.idx")
	os.WriteFile(path, huge, 0o644)
	r2, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	refused := false
	for k := range entriesOf(10, "a") {
		if _, _, err := r2.Get(k); err != nil && strings.Contains(err.Error(), "outside the file") {
			refused = true
		}
	}
	if !refused {
		t.Error("an entry longer than the file was read")
	}
}

// Readers that open and read the index while it is published again and
// again each see one whole version, never a mix or a torn file.
func TestReadersDuringPublishes(t *testing.T) {
	path := filepath.Join(t.TempDir(), IndexName)
	versions := []map[Key][]byte{entriesOf(300, "a"), entriesOf(500, "b")}
	if err := WriteFile(path, versions[0]); err != nil {
		t.Fatal(err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	var reads, failures atomic.Int64
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				r, err := Open(path)
				if err != nil {
					failures.Add(1)
					t.Errorf("open: %v", err)
					return
				}
				tag := ""
				for i := range 300 {
					p, ok, err := r.Get(KeyOf("fp", fmt.Sprint(i)))
					if err != nil || !ok {
						failures.Add(1)
						t.Errorf("get %d: %v %v", i, ok, err)
						break
					}
					v := string(p[len(`{"runs":[],"tag":"`)])
					if tag == "" {
						tag = v
					} else if v != tag {
						t.Errorf("one open read versions %s and %s", tag, v)
					}
				}
				r.Close()
				reads.Add(1)
			}
		}()
	}
	for i := range 200 {
		if err := WriteFile(path, versions[i%2]); err != nil {
			t.Fatal(err)
		}
	}
	stop.Store(true)
	wg.Wait()
	if reads.Load() == 0 || failures.Load() > 0 {
		t.Errorf("%d reads, %d failures", reads.Load(), failures.Load())
	}
}
