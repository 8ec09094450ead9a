//go:build linux

package benchharness

import (
	"fmt"
	"io"
)

// Report is a measurement summed up, command by command, in milliseconds.
type Report struct {
	Submitters int             `json:"submitters"`
	Rounds     int             `json:"rounds"`
	Commands   []CommandReport `json:"commands"`
}

// CommandReport is what one command's submissions took. The Added spreads
// are of pairs: each submission less the baseline's (the first command's)
// by the same submitter in the same round; the baseline's are zero.
type CommandReport struct {
	Name        string `json:"name"`
	Prompt      Spread `json:"prompt_ms"`       // until the process exits
	PromptAdded Spread `json:"prompt_added_ms"` // over the baseline, paired
	Done        Spread `json:"done_ms"`         // until its last process exits
	CPU         Spread `json:"cpu_ms"`          // all its processes
	CPUAdded    Spread `json:"cpu_added_ms"`    // over the baseline, paired
	OwnCPU      Spread `json:"own_cpu_ms"`      // the process itself
	// Of the submissions: those whose output had sbatch's line, those
	// with advice, and of these, those whose advice came after sbatch's
	// line, and after the process had exited.
	Answered          int `json:"answered"`
	Advised           int `json:"advised"`
	AdviceAfterAnswer int `json:"advice_after_answer"`
	AdviceAfterPrompt int `json:"advice_after_prompt"`
}

// Summarize sums up the submissions of cfg's commands.
func Summarize(cfg Config, subs []Submission) Report {
	type key struct{ submitter, round int }
	base := map[key]Submission{}
	for _, s := range subs {
		if s.Command == cfg.Commands[0].Name {
			base[key{s.Submitter, s.Round}] = s
		}
	}
	rep := Report{Submitters: cfg.Submitters, Rounds: cfg.Rounds}
	for _, c := range cfg.Commands {
		var prompt, added, done, cpu, cpuAdded, own []float64
		cr := CommandReport{Name: c.Name}
		for _, s := range subs {
			if s.Command != c.Name {
				continue
			}
			prompt, done, cpu, own = append(prompt, s.PromptMS), append(done, s.DoneMS), append(cpu, s.CPUMS), append(own, s.OwnCPUMS)
			if b, ok := base[key{s.Submitter, s.Round}]; ok {
				added, cpuAdded = append(added, s.PromptMS-b.PromptMS), append(cpuAdded, s.CPUMS-b.CPUMS)
			}
			cr.count(s)
		}
		cr.Prompt, cr.PromptAdded, cr.Done = SpreadOf(prompt), SpreadOf(added), SpreadOf(done)
		cr.CPU, cr.CPUAdded, cr.OwnCPU = SpreadOf(cpu), SpreadOf(cpuAdded), SpreadOf(own)
		rep.Commands = append(rep.Commands, cr)
	}
	return rep
}

func (cr *CommandReport) count(s Submission) {
	if s.AnswerLine > 0 {
		cr.Answered++
	}
	if s.AdviceLine > 0 {
		cr.Advised++
	}
	if s.AdviceAfterAnswer() {
		cr.AdviceAfterAnswer++
	}
	if s.AdviceAfterPrompt() {
		cr.AdviceAfterPrompt++
	}
}

// AfterAnswerShare is the share of the advised submissions whose advice
// came after sbatch's line; 0 with none advised.
func (cr CommandReport) AfterAnswerShare() float64 { return share(cr.AdviceAfterAnswer, cr.Advised) }

// AfterPromptShare is the share of the advised submissions whose advice
// came after the process had exited.
func (cr CommandReport) AfterPromptShare() float64 { return share(cr.AdviceAfterPrompt, cr.Advised) }

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}

// WriteText writes the report as a table, one row a spread.
func (rep Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "%d submitter(s) side by side, %d rounds each, interleaved (ABBA); ms: min / median / p95 / p99 / max\n",
		rep.Submitters, rep.Rounds)
	for i, c := range rep.Commands {
		fmt.Fprintf(w, "%s (%d submissions)\n", c.Name, c.Prompt.N)
		row(w, "to the prompt", c.Prompt)
		if i > 0 {
			row(w, "  added, paired", c.PromptAdded)
		}
		row(w, "until its last process exits", c.Done)
		row(w, "CPU, all its processes", c.CPU)
		if i > 0 {
			row(w, "  added, paired", c.CPUAdded)
		}
		row(w, "CPU of the process itself", c.OwnCPU)
		if c.Advised > 0 {
			fmt.Fprintf(w, "  advice in %d of %d; after sbatch's line in %d (%.1f%%), after the prompt in %d (%.1f%%)\n",
				c.Advised, c.Prompt.N, c.AdviceAfterAnswer, 100*c.AfterAnswerShare(), c.AdviceAfterPrompt, 100*c.AfterPromptShare())
		}
	}
}

func row(w io.Writer, name string, s Spread) { fmt.Fprintf(w, "  %-30s %s\n", name, s) }
