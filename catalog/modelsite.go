package catalog

import (
	"fmt"
	"strconv"
	"strings"
)

// ModelSite is a site made of a built-in GPU model alone: every MIG profile
// of the model but the media-extension ones (+me), and the whole GPU as
// "full", each requested as --gres=gpu:TYPE:1 with TYPE its name with dots
// made underscores (1g_10gb), all in one partition "gpu", billed 16 SU per
// hour of the whole GPU's memory. It stands for a site that has published
// measurements but no site file here; model is a name or an alias, as
// LookupModel takes it.
func ModelSite(model string) (*Site, error) {
	m, ok := LookupModel(model)
	if !ok {
		return nil, fmt.Errorf("no built-in GPU model %q (built-in: %s)", model, strings.Join(BuiltinModelNames(), ", "))
	}
	memory, err := m.Memory.MarshalText()
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "version = %d\nname = %s\ntitle = %s\ngpu_model = %s\n\n",
		FormatVersion, strconv.Quote(strings.ToLower(m.Name)), strconv.Quote(m.Name+": every MIG profile and the whole GPU"), strconv.Quote(m.Name))
	fmt.Fprintf(&b, "[billing]\ngpu_weight = 16.0\ngpu_memory = %s\n\n[[partitions]]\nname = \"gpu\"\n", strconv.Quote(string(memory)))
	profile := func(name, slice string) {
		request := "--gres=gpu:" + strings.ReplaceAll(name, ".", "_") + ":1"
		fmt.Fprintf(&b, "\n[[profiles]]\nname = %s\nslice = %s\nrequest = %s\npartitions = [\"gpu\"]\n",
			strconv.Quote(name), strconv.Quote(slice), strconv.Quote(request))
	}
	for _, p := range m.Profiles {
		if !strings.Contains(p.Name, "+me") {
			profile(p.Name, p.Name)
		}
	}
	profile(FullGPU, FullGPU)
	return Parse("GPU model "+m.Name, []byte(b.String()))
}

// BuiltinModelNames lists the built-in GPU models by name, in the table's order.
func BuiltinModelNames() []string {
	models := builtinModels()
	names := make([]string, len(models))
	for i, m := range models {
		names[i] = m.Name
	}
	return names
}
