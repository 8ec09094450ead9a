package slurm

import "testing"

func TestFingerprintIgnoresResources(t *testing.T) {
	base := "#!/bin/bash\n#SBATCH --job-name=a --gres=gpu:a100_10g:1 -p gpu -t 1:00:00 --mem=4G -c 2 -o a.out\nmodule load x\npython train.py --lr 0.1\n"
	same := []string{
		"#!/bin/bash\n#SBATCH --job-name=b --gres=gpu:a100:1 -p debug_gpu -t 2:00:00 --mem=8G -c 4 -o b.out -q low\n\nmodule load x\n  python   train.py --lr 0.1  \n",
		"#!/bin/bash\n# a comment in the header\n#SBATCH -G 1\nmodule load x\npython train.py --lr 0.1\n",
		"#!/bin/bash\nmodule load x\npython train.py --lr 0.1\n",
		"#!/bin/bash\r\n#SBATCH -t 5\r\nmodule load x\r\npython train.py --lr 0.1\r\n",
		"#!/bin/bash\nmodule load x\npython train.py --lr 0.1\nmigadvisor monitor --out m.json -- true " + AutoMarker + "\n",
	}
	want := Parse("a.sh", []byte(base)).Fingerprint()
	for i, s := range same {
		if got := Parse("b.sh", []byte(s)).Fingerprint(); got != want {
			t.Errorf("variant %d: fingerprint %s, want %s", i, got, want)
		}
	}
	different := []string{
		"#!/bin/bash\nmodule load x\npython train.py --lr 0.2\n",
		"#!/bin/sh\nmodule load x\npython train.py --lr 0.1\n",
		"#!/bin/bash\n#SBATCH --array=1-4\nmodule load x\npython train.py --lr 0.1\n",
		"#!/bin/bash\n#SBATCH --gres=gpu:1,lscratch:10\nmodule load x\npython train.py --lr 0.1\n",
		"#!/bin/bash\nmodule load x\npython train.py --lr 0.1\n# a comment in the body counts\n",
	}
	for i, s := range different {
		if got := Parse("c.sh", []byte(s)).Fingerprint(); got == want {
			t.Errorf("changed script %d kept the fingerprint", i)
		}
	}
}
