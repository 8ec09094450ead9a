package slurm

import (
	"slices"
	"time"
)

// SacctFields are the fields migadvisor asks sacct for. JobName comes last so
// that a delimiter inside a name cannot shift the other fields.
var SacctFields = []string{
	"JobIDRaw", "JobID", "Cluster", "User", "Account", "Partition", "QOS", "State", "ExitCode",
	"Submit", "Start", "End", "ElapsedRaw", "TimelimitRaw", "NNodes", "AllocCPUS", "NTasks",
	"ReqMem", "MaxRSS", "AllocTRES", "ReqTRES", "TRESUsageInMax", "NodeList", "WorkDir", "AdminComment", "JobName",
}

// SacctDelimiter separates fields when migadvisor runs sacct itself: a control
// character that job names and paths do not contain in practice. Saved dumps
// made with plain --parsable2 use "|"; the reader takes the header's.
const SacctDelimiter = "\x1f"

// AcctJob is one job as accounting knows it, its steps merged in. Numbers that
// accounting did not give are negative (Unknown).
type AcctJob struct {
	Line     int    // input line of its first record
	Key      string // JobIDRaw of the allocation (JobID when the dump has no JobIDRaw): unique per cluster
	ID       string // JobID as users see it: 123, 123_4, 123+0
	ArrayJob string // the id sbatch printed: 123 for 123, 123_4 and 123+0

	Cluster, User, Account, Partition, QOS, Name, WorkDir, NodeList string

	State       string // COMPLETED, FAILED, CANCELLED, OUT_OF_MEMORY, TIMEOUT, RUNNING, ...
	CancelledBy string // the uid in "CANCELLED by N"
	ExitCode    int
	ExitSignal  int

	Submit, Start, End time.Time // zero when Unknown or None
	Elapsed            time.Duration
	TimeLimit          TimeLimit // unset when the partition's limit applies
	PartitionLimit     bool

	Nodes, CPUs int
	ReqMemMiB   float64 // total over the allocation
	MaxRSSMiB   float64 // max over steps of MaxRSS × NTasks
	GPUType     string  // typed GPU of AllocTRES, or of ReqTRES for a job that never ran
	GPUCount    int
	GPUMemMiB   float64 // gres/gpumem of TRESUsageInMax, max over steps
	GPUUtil     float64 // gres/gpuutil of TRESUsageInMax, max over steps
	// Jobstats is the jobstats summary in the job's AdminComment (nil: none,
	// or the site's own note); JobstatsErr why one could not be read (the
	// job is imported all the same).
	Jobstats    *Jobstats
	JobstatsErr error

	HasJobLine bool // the allocation's own line was in the input
	ReqTRES    string
	Steps      int
}

// Unknown marks a number accounting did not give.
const Unknown = -1

// Terminal reports whether the job has ended for good.
func (j *AcctJob) Terminal() bool { return TerminalState(j.State) }

// TerminalState reports whether a job in state (as sacct or squeue print it,
// "CANCELLED by N" included) has ended for good.
func TerminalState(state string) bool {
	return state != "" && !ActiveState(state)
}

// ActiveState reports whether a job in state has not ended: pending,
// running, and the like.
func ActiveState(state string) bool {
	state, _ = splitState(state)
	return slices.Contains(ActiveStates, state)
}

// ActiveStates are the states of a job that has not ended.
var ActiveStates = []string{"PENDING", "RUNNING", "SUSPENDED", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED",
	"RESIZING", "SIGNALING", "STAGE_OUT", "CONFIGURING", "COMPLETING", "RESV_DEL_HOLD", "SPECIAL_EXIT"}

// Stub reports whether this is the placeholder record slurmdbd shows for a
// short job before the job's start record arrives (JobName "allocation", no
// ReqTRES): its real values replace it seconds later.
func (j *AcctJob) Stub() bool {
	return j.HasJobLine && j.Name == "allocation" && j.ReqTRES == ""
}

// sacct columns the reader understands.
const (
	colJobIDRaw = iota
	colJobID
	colCluster
	colUser
	colAccount
	colPartition
	colQOS
	colState
	colExitCode
	colSubmit
	colStart
	colEnd
	colElapsedRaw
	colElapsed
	colTimelimitRaw
	colTimelimit
	colNNodes
	colAllocCPUS
	colNCPUS
	colNTasks
	colReqMem
	colMaxRSS
	colAllocTRES
	colReqTRES
	colTRESUsageInMax
	colNodeList
	colWorkDir
	colAdminComment
	colJobName
	numCols
)

var colByName = map[string]int{
	"jobidraw": colJobIDRaw, "jobid": colJobID, "cluster": colCluster, "user": colUser,
	"account": colAccount, "partition": colPartition, "qos": colQOS, "state": colState,
	"exitcode": colExitCode, "submit": colSubmit, "start": colStart, "end": colEnd,
	"elapsedraw": colElapsedRaw, "elapsed": colElapsed, "timelimitraw": colTimelimitRaw,
	"timelimit": colTimelimit, "nnodes": colNNodes, "alloccpus": colAllocCPUS, "ncpus": colNCPUS,
	"ntasks": colNTasks, "reqmem": colReqMem, "maxrss": colMaxRSS, "alloctres": colAllocTRES,
	"reqtres": colReqTRES, "tresusageinmax": colTRESUsageInMax, "nodelist": colNodeList,
	"workdir": colWorkDir, "admincomment": colAdminComment, "jobname": colJobName,
}
