//go:build linux

package benchharness

import "testing"

// A command that leaves a process running, as the sbatch shim leaves the
// wrapper: the prompt comes back when the command exits, the submission is
// done when what it left has exited too, and that process's CPU time and
// lines are the submission's.
func TestSubmitWaitsForWhatTheCommandLeaves(t *testing.T) {
	if err := BecomeSubreaper(); err != nil {
		t.Fatal(err)
	}
	marks := Marks{Advice: "migadvisor:", Answer: "Submitted batch job"}
	for _, c := range []struct {
		name, script               string
		afterAnswer, afterPrompt   bool
		leftCPU, leftRunningAtExit bool
	}{
		{"advice first", `echo "migadvisor: advice"; echo "Submitted batch job 1"`, false, false, false, false},
		{"advice after, from a process left running",
			`(sleep 0.1; i=0; while [ $i -lt 50000 ]; do i=$((i+1)); done; echo "migadvisor: late") & echo "Submitted batch job 1"`,
			true, true, true, true},
	} {
		sub, err := Command{Name: c.name, Path: "/bin/sh", Args: []string{"-c", c.script}}.Submit(marks)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if sub.AdviceLine == 0 || sub.AnswerLine == 0 || sub.AdviceAfterAnswer() != c.afterAnswer || sub.AdviceAfterPrompt() != c.afterPrompt {
			t.Errorf("%s: advice line %d ending at byte %d, answer line %d, %d bytes at the prompt: after the answer %v, after the prompt %v; want %v, %v",
				c.name, sub.AdviceLine, sub.AdviceEnd, sub.AnswerLine, sub.PromptBytes, sub.AdviceAfterAnswer(), sub.AdviceAfterPrompt(),
				c.afterAnswer, c.afterPrompt)
		}
		if c.leftRunningAtExit && (sub.PromptMS >= 100 || sub.DoneMS < 100) {
			t.Errorf("%s: prompt at %.1f ms, done at %.1f ms; want the prompt before the left process's 100 ms sleep, done after", c.name, sub.PromptMS, sub.DoneMS)
		}
		if c.leftCPU && sub.CPUMS <= sub.OwnCPUMS {
			t.Errorf("%s: CPU %.2f ms, the process's own %.2f ms: the left process's is not counted", c.name, sub.CPUMS, sub.OwnCPUMS)
		}
		if sub.Status != 0 {
			t.Errorf("%s: status %d", c.name, sub.Status)
		}
	}
}
