package advisor

import (
	"fmt"

	"github.com/migadvisor/migadvisor/advisor/base/lint"
	"github.com/migadvisor/migadvisor/catalog"
)

// GPUUse says that a job uses several GPUs, and how the script shows it.
type GPUUse struct {
	GPUs int    `json:"gpus"`
	Line int    `json:"line,omitempty"` // the script's line that shows it; 0: unknown
	Why  string `json:"why"`            // "--gres=gpu:a100:2", "torchrun --nproc_per_node=4"
}

// migLimits is what a MIG slice cannot do for a job of several GPUs.
const migLimits = "a CUDA process sees a single MIG device, and slices have no NVLink peer-to-peer between them, so NCCL cannot join them"

// gpuUse reads how many GPUs the job uses: MultiGPU's reading of the
// script (its request, and launchers such as torchrun) when the job has its
// script, else its GPU request. A job of several GPUs is judged on whole
// GPUs only: no slice can serve it, and the note says so. nil: one GPU.
func gpuUse(job Job) (*GPUUse, string) {
	var use *GPUUse
	if job.Source != nil {
		if n, line, why := lint.MultiGPU(job.Source); n > 1 {
			use = &GPUUse{GPUs: n, Line: line, Why: why}
		}
	} else if n := job.Resources.GPUCount(); n > 1 {
		use = &GPUUse{GPUs: n, Why: fmt.Sprintf("it asks for %d GPUs", n)}
		if len(job.Resources.GPUs) > 0 {
			use.Line = job.Resources.GPUs[0].Line
		}
	}
	if use == nil || use.GPUs < 2 {
		return nil, ""
	}
	where := ""
	if use.Line > 0 {
		where = fmt.Sprintf(" (line %d: %s)", use.Line, use.Why)
	}
	return use, fmt.Sprintf("this job uses %d GPUs%s, and MIG slices cannot serve it: %s. Only whole GPUs are judged; to try a slice, make a single-GPU version of the script and probe that",
		use.GPUs, where, migLimits)
}

// gpusOn is how many GPUs of the profile the job takes (u nil: one GPU).
func (u *GPUUse) gpusOn(p *catalog.Profile) int {
	if u != nil && !p.IsMIG() {
		return u.GPUs
	}
	return 1
}

// exclusion says why the profile cannot run the job at all, or "".
func (u *GPUUse) exclusion(p *catalog.Profile) string {
	if u != nil && p.IsMIG() {
		return fmt.Sprintf("a MIG slice cannot serve a job of %d GPUs: %s", u.GPUs, migLimits)
	}
	return ""
}

// wholeGPUProfiles lists the site's profiles that are whole GPUs, for --profiles.
func wholeGPUProfiles(site *catalog.Site) []string {
	var names []string
	for _, p := range site.Profiles {
		if !p.IsMIG() {
			names = append(names, p.Name)
		}
	}
	return names
}
