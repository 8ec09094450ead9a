//go:build linux

package benchharness

import "testing"

// Pairs are a submission and the baseline's by the same submitter in the
// same round; the shares count the advised submissions only.
func TestSummarizePairsAndShares(t *testing.T) {
	cfg := Config{Submitters: 2, Rounds: 2, Commands: []Command{{Name: "sbatch"}, {Name: "shim"}}}
	sub := func(cmd string, submitter, round int, prompt, cpu float64, advice, answer int) Submission {
		return Submission{Command: cmd, Submitter: submitter, Round: round, PromptMS: prompt, DoneMS: prompt + 1, CPUMS: cpu, OwnCPUMS: cpu / 2,
			AdviceLine: advice, AnswerLine: answer}
	}
	rep := Summarize(cfg, []Submission{
		sub("sbatch", 0, 0, 1, 1, 0, 1), sub("shim", 0, 0, 2, 4, 1, 2),
		sub("sbatch", 0, 1, 3, 1, 0, 1), sub("shim", 0, 1, 4, 5, 2, 1),
		sub("sbatch", 1, 0, 10, 1, 0, 1), sub("shim", 1, 0, 16, 6, 0, 1),
		sub("sbatch", 1, 1, 5, 2, 0, 1), sub("shim", 1, 1, 9, 9, 3, 1),
	})
	shim := rep.Commands[1]
	if want := (Spread{N: 4, Min: 1, Median: 1, P95: 6, P99: 6, Max: 6}); shim.PromptAdded != want {
		t.Errorf("prompt added = %+v, want %+v", shim.PromptAdded, want)
	}
	if want := (Spread{N: 4, Min: 3, Median: 4, P95: 7, P99: 7, Max: 7}); shim.CPUAdded != want {
		t.Errorf("CPU added = %+v, want %+v", shim.CPUAdded, want)
	}
	if shim.Advised != 3 || shim.AdviceAfterAnswer != 2 || shim.Answered != 4 {
		t.Errorf("advised %d, after the answer %d, answered %d; want 3, 2, 4", shim.Advised, shim.AdviceAfterAnswer, shim.Answered)
	}
	if got := shim.AfterAnswerShare(); got != 2.0/3 {
		t.Errorf("share after the answer = %v, want 2/3", got)
	}
	if base := rep.Commands[0]; base.PromptAdded != (Spread{N: 4}) || base.Advised != 0 {
		t.Errorf("the baseline paired with itself: %+v", base)
	}
}
