package slurm

import (
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
