package session

import (
	"time"

	"github.com/migadvisor/migadvisor/advisor/base/history"
	"github.com/migadvisor/migadvisor/slurm"
)

// Kept is what a user's advice index (advisor/app/index) keeps of their
// sessions of one job name, so that salloc's cli_filter judges them
// without a history: the newest ended sessions of one GPU of a profile, at
// most DefaultLast, with the figures Judge weighs. It holds no user, job
// name, path or output text: the index's key names the sessions.
type Kept struct {
	Sessions []KeptSession `json:"s"`
}

// KeptSession is one session as Kept holds it; a figure absent is unknown.
type KeptSession struct {
	Cluster      string            `json:"c,omitempty"`
	JobID        string            `json:"j"`
	State        string            `json:"st"`
	Profile      string            `json:"p"`
	Partition    string            `json:"part,omitempty"`
	QoS          string            `json:"qos,omitempty"`
	CPUs         *int64            `json:"cpus,omitempty"`
	ReqMemMiB    *float64          `json:"mem,omitempty"`
	Submitted    int64             `json:"at,omitempty"`    // unix seconds
	Started      int64             `json:"start,omitempty"` // unix seconds; 0: never started
	HeldS        *int64            `json:"held,omitempty"`
	GPUOOM       string            `json:"goom,omitempty"` // the framework that reported it
	NeedMiB      *float64          `json:"need,omitempty"`
	MonitorMiB   *float64          `json:"mon,omitempty"`
	JobstatsMiB  *float64          `json:"js,omitempty"`
	SacctMiB     *float64          `json:"acct,omitempty"`
	AllocatedMiB float64           `json:"alloc,omitempty"`
	Software     map[string]string `json:"sw,omitempty"`
	Settings     map[string]string `json:"set,omitempty"`
}

// Keep is what an index keeps of recs, one user's jobs of one name,
// newest first (as history.Store.History lists them); false when none of
// them is a session Judge could weigh.
func Keep(recs []history.JobRecord) (Kept, bool) {
	var k Kept
	for i := range recs {
		r := &recs[i]
		if len(k.Sessions) == DefaultLast {
			break
		}
		if isSession(r) && ended(r) && r.GPUCount == 1 && r.Profile != "" {
			k.Sessions = append(k.Sessions, keptOf(r))
		}
	}
	return k, len(k.Sessions) > 0
}

func keptOf(r *history.JobRecord) KeptSession {
	s := KeptSession{Cluster: r.Cluster, JobID: r.JobID, State: r.State, Profile: r.Profile, Partition: r.Partition, QoS: r.QOS,
		CPUs: r.CPUs, ReqMemMiB: r.ReqMemMiB, HeldS: r.ElapsedS, GPUOOM: r.GPUOOM, NeedMiB: r.GPUNeedMiB, MonitorMiB: r.MonitorPeakMiB,
		JobstatsMiB: r.JobstatsPeakMiB, SacctMiB: r.AcctGPUMemMiB, AllocatedMiB: r.Metrics[slurm.AllocatedMetric],
		Software: r.Versions, Settings: r.Settings}
	if r.Submit != nil {
		s.Submitted = r.Submit.Unix()
	}
	if r.Start != nil {
		s.Started = r.Start.Unix()
	}
	return s
}

// Records are the sessions kept as the history's records of user's jobs
// named name, newest first: what Judge reads.
func (k Kept) Records(user, name string) []history.JobRecord {
	recs := make([]history.JobRecord, 0, len(k.Sessions))
	for _, s := range k.Sessions {
		r := history.JobRecord{Cluster: s.Cluster, Key: s.JobID, JobID: s.JobID, Name: name, User: user, State: s.State,
			Profile: s.Profile, Partition: s.Partition, QOS: s.QoS, CPUs: s.CPUs, ReqMemMiB: s.ReqMemMiB, ElapsedS: s.HeldS,
			GPUCount: 1, GPUOOM: s.GPUOOM, GPUNeedMiB: s.NeedMiB, MonitorPeakMiB: s.MonitorMiB, JobstatsPeakMiB: s.JobstatsMiB,
			AcctGPUMemMiB: s.SacctMiB, Versions: s.Software, Settings: s.Settings}
		if s.Submitted != 0 {
			at := time.Unix(s.Submitted, 0).UTC()
			r.Submit = &at
		}
		if s.Started != 0 {
			at := time.Unix(s.Started, 0).UTC()
			r.Start = &at
		}
		if s.AllocatedMiB > 0 {
			r.Metrics = map[string]float64{slurm.AllocatedMetric: s.AllocatedMiB}
		}
		recs = append(recs, r)
	}
	return recs
}
