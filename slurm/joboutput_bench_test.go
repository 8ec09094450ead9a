package slurm

import (
	"bytes"
	"strings"
	"testing"
)

// BenchmarkScanOutput is the scan of a job's output as collect reads it:
// mostly a training loop's own lines, tqdm's bars rewritten with carriage
// returns, NCCL's and a framework's log lines, and Keras' bars as they land
// in a file (carriage returns, backspaces, colour codes), one long line an
// epoch. Every line passes the software marks' gates, so a mark that costs
// every line shows here.
func BenchmarkScanOutput(b *testing.B) {
	var sb strings.Builder
	keras := "\r\x1b[1m 12/469\x1b[0m \x1b[37m━━━━━━━━━━━━━━━━━━━━\x1b[0m \x1b[1m2s\x1b[0m 5ms/step - accuracy: 0.2310 - loss: 2.1000" + strings.Repeat("\x08", 90)
	for i := 0; i < 2000; i++ {
		sb.WriteString("epoch 1 step 25: loss 12.2232, 812.4 tokens/s, lr 2.0e-04, grad norm 0.41 (data 0.02 s, step 0.38 s)\n")
		sb.WriteString(" 45%|████▌     | 450/1000 [00:12<00:15, 36.51it/s]\r 46%|████▌     | 460/1000 [00:12<00:15, 36.52it/s]\n")
		sb.WriteString("gpu001:12345:12345 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC/read\n")
		sb.WriteString("2024-10-30 15:24:47.123456: I some/lib/port.cc:153] step 25 done in 0.38 s\n")
		sb.WriteString("{'step': 25, 'val_loss': 0.5, 'acc': 0.9}\n")
		if i%20 == 0 {
			sb.WriteString("epoch 1: peak memory 7.8 GiB\n")
		}
		if i%100 == 0 {
			sb.WriteString(strings.Repeat(keras, 50) + "\n")
		}
	}
	out := []byte(sb.String())
	b.SetBytes(int64(len(out)))
	b.ReportAllocs()
	for range b.N {
		if _, err := ScanOutput(bytes.NewReader(out), ScanOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}
