package slurm

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func TestReadConfKeysAnyCaseCommentsOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "slurm.conf")
	os.WriteFile(path, []byte("ClusterName=migdev # the cluster\n#CliFilterPlugins=cli_filter/none\n"+
		"NodeName=gpu[1-2] Gres=gpu:a100:4 CPUs=64\ncliFilterPlugins=cli_filter/lua\n"), 0o644)
	params, err := ReadConf(path)
	if err != nil || params["clustername"] != "migdev" || params["clifilterplugins"] != "cli_filter/lua" || params["gres"] != "gpu:a100:4" {
		t.Errorf("ReadConf: %v %v", params, err)
	}
	if _, err := ReadConf(filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("a missing file read")
	}
}

// The cluster's name comes from the slurm.conf the commands read, where it
// names one (lowercased, as Slurm maps it), without asking a controller
// that may not be up; else from scontrol.
func TestClusterNameFromSlurmConf(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "slurm.conf")
	os.WriteFile(conf, []byte("# a site\nClusterName=Wulver   # its name\nSlurmctldHost=ctl\n"), 0o644)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "scontrol"), []byte("#!/bin/sh\necho 'ClusterName             = fromctld'\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	c := &Client{Env: []string{"SLURM_CONF=" + conf}}
	if name, err := c.ClusterName(context.Background()); err != nil || name != "wulver" {
		t.Errorf("from slurm.conf: %q %v", name, err)
	}
	c.Env = []string{"SLURM_CONF=" + filepath.Join(dir, "none.conf")}
	if name, err := c.ClusterName(context.Background()); err != nil || name != "fromctld" {
		t.Errorf("no slurm.conf: %q %v, want scontrol's", name, err)
	}
}
