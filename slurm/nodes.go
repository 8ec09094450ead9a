package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// A GPUNode is a node as `scontrol show node` describes its GPUs: how
// many of each GRES type it has (a MIG slice is a type of its own:
// gpu:a100_10g, or AutoDetect's gpu:nvidia_a100_1g.10gb).
type GPUNode struct {
	Name string
	GPUs map[string]int // by GRES type; "" for untyped gpu:N
}

// GPUNodes asks slurmctld for its nodes' GPUs; nodes without a gpu GRES
// are left out.
func (c *Client) GPUNodes(ctx context.Context) ([]GPUNode, error) {
	out, err := c.run(ctx, "", "scontrol", "--oneliner", "show", "node")
	if err != nil {
		return nil, err
	}
	return ParseGPUNodes(string(out))
}

// ParseGPUNodes reads `scontrol --oneliner show node`: one line a node,
// its Gres= a list of name:type:count, each count perhaps followed by its
// sockets, "gpu:a100:4(S:0-1)".
func ParseGPUNodes(text string) ([]GPUNode, error) {
	var nodes []GPUNode
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		kv := parseOneliner(line)
		name := kv["NodeName"]
		if name == "" {
			return nil, fmt.Errorf("scontrol show node, line %d: no NodeName", i+1)
		}
		gpus, err := parseNodeGres(kv["Gres"])
		if err != nil {
			return nil, fmt.Errorf("scontrol show node, line %d (node %s): %w", i+1, name, err)
		}
		if len(gpus) > 0 {
			nodes = append(nodes, GPUNode{Name: name, GPUs: gpus})
		}
	}
	return nodes, nil
}

// parseNodeGres reads a node's Gres=: "gpu:a100_10g:2,gpu:a100:1(S:0)",
// "(null)" for none.
func parseNodeGres(gres string) (map[string]int, error) {
	out := map[string]int{}
	if gres == "" || gres == "(null)" {
		return out, nil
	}
	for _, item := range strings.Split(gres, ",") {
		item, _, _ = strings.Cut(item, "(") // the sockets it is bound to
		parts := strings.Split(item, ":")
		if parts[0] != "gpu" {
			continue // other GRES (a shard's, a license's) are not GPUs
		}
		typ, count := "", ""
		switch len(parts) {
		case 2:
			count = parts[1]
		case 3:
			typ, count = parts[1], parts[2]
		default:
			return nil, fmt.Errorf("Gres %q: %q is not gpu:TYPE:COUNT", gres, item)
		}
		n, err := strconv.Atoi(count)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("Gres %q: %q has no count", gres, item)
		}
		out[typ] += n
	}
	return out, nil
}
