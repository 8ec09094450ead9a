-- cli_filter.lua: migadvisor's advice at submission, inside Slurm's own
-- sbatch, salloc and srun (the cli_filter/lua plugin), for login nodes.
-- `make install` writes it to PREFIX/share/migadvisor/cli_filter.lua with
-- its prefix in it.
--
-- Enable it on login nodes only: CliFilterPlugins=cli_filter/lua in their
-- slurm.conf, and this file as cli_filter.lua in the same directory
-- (docs/admin/wrapper.md). A site with a cli_filter.lua of its own keeps it
-- and adds, before its hooks, dofile("PREFIX/share/migadvisor/cli_filter.lua"),
-- then calls migadvisor.pre_submit(options, offset) and
-- migadvisor.post_submit(offset, jobid) from its own slurm_cli_pre_submit and
-- slurm_cli_post_submit.
--
-- slurm_cli_pre_submit, after sbatch parsed its options (command line,
-- environment, #SBATCH lines) and before it asks slurmctld, looks the
-- submission up in the user's filter cache (beside their history: the
-- script's path, size and checksum, and the options and environment the
-- advice reads). Found, it prints the advice cached and keeps the record's
-- draft, with no process started. Not found, it runs
-- `PREFIX/libexec/migadvisor/migadvisor-sbatch filter-advise OPTIONS KEY`:
-- the advice goes to sbatch's stderr, before "Submitted batch job"; on
-- stdout come the options to set (only where the user consented:
-- MIGADVISOR_APPLY=1 in the environment), the submission's record without
-- its job id, and "ok"; and the answer goes to the cache for next time
-- (each collect that rewrites the user's index answers the cache's
-- submissions again, of the new index, in its own process). One
-- submission, with the options changed in place. slurm_cli_post_submit
-- writes the record, with its job id, into the user's history's spool,
-- where collect links it to that job exactly.
--
-- In salloc, and in srun where it makes a job, the session has no script:
-- the cache's key is of its options and job name (migadvisor.session_key),
-- and `filter-advise --type=salloc OPTIONS KEY` advises from the user's past
-- sessions of the job's name, the same way, with no record (collect finds
-- sessions by their name).
--
-- It never fails or blocks a submission: every hook returns slurm.SUCCESS,
-- any error costs at most one line on stderr (none with MIGADVISOR_QUIET=1),
-- and migadvisor-sbatch has a hard time limit. It does nothing inside a job
-- (SLURM_JOB_ID set: every srun step runs the filter), for srun --jobid
-- (a step of a job there is), with MIGADVISOR_DISABLE=1, where migadvisor
-- advised already (the sbatch shim or the wrapper ran sbatch), or for
-- components of a heterogeneous job but the first. Plain Lua 5.1: io and
-- os, no modules.

local PREFIX = [==[@PREFIX@]==]

migadvisor = migadvisor or {}
local M = migadvisor
M.bin = PREFIX .. "/libexec/migadvisor/migadvisor-sbatch"
M.ttl = 24 * 3600 -- seconds a cached answer holds (advisor/app/wrapper/filtercache.go)

-- The record's draft of each component, from pre_submit to post_submit.
local drafts = {}

-- The options and the environment the advice reads, in the key of the
-- cache: advisor/app/wrapper/filter.go's filterFlags and filterResources, the
-- SBATCH_* variables of slurm/cmdline.go's sbatchEnv, the wrapper's own
-- settings, who submits and from where (advisor/app/wrapper's filterKeyEnv:
-- a refresh answers an entry again with the environment its key holds).
M.key_options = { "test-only", "wrap", "chdir", "clusters",
	"partition", "qos", "account", "job-name", "output", "error", "array", "time",
	"nodes", "ntasks", "ntasks-per-node", "cpus-per-task", "cpus-per-gpu", "mincpus", "sockets-per-node",
	"exclusive", "mem", "mem-per-cpu", "mem-per-gpu",
	"gres", "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket" }
M.key_env = { "MIGADVISOR_APPLY", "MIGADVISOR_SITE", "MIGADVISOR_CLUSTER", "USER", "LOGNAME", "PWD",
	"SBATCH_PARTITION", "SBATCH_QOS", "SBATCH_ACCOUNT", "SBATCH_TIMELIMIT", "SBATCH_GRES", "SBATCH_GPUS",
	"SBATCH_GPUS_PER_NODE", "SBATCH_GPUS_PER_TASK", "SBATCH_CPUS_PER_GPU", "SBATCH_MEM_PER_CPU",
	"SBATCH_MEM_PER_GPU", "SBATCH_MEM_PER_NODE", "SBATCH_EXCLUSIVE", "SBATCH_JOB_NAME" }

-- quote is s as one word for /bin/sh (io.popen and os.execute go through
-- it): in single quotes, each ' as '\''. nil for what sh cannot be given (a
-- NUL byte ends a C string).
function M.quote(s)
	s = tostring(s)
	if string.find(s, "\0", 1, true) then
		return nil
	end
	return "'" .. string.gsub(s, "'", "'\\''") .. "'"
end

local function warn(msg)
	if os.getenv("MIGADVISOR_QUIET") ~= "1" then
		io.stderr:write("migadvisor: " .. tostring(msg) .. "\n")
	end
end

local function comm(pid)
	local f = io.open("/proc/" .. pid .. "/comm", "r")
	if not f then
		return ""
	end
	local name = f:read("*l") or ""
	f:close()
	return name
end

-- The names /proc gives migadvisor's binaries that advise: the kernel
-- keeps 15 bytes of a name.
local advisers = { ["migadvisor"] = true, ["migadvisor-sbat"] = true }

-- advised reports whether migadvisor advised this submission already, as
-- /proc tells (sbatch passes its environment on to the job untouched, so
-- no variable can say it): the wrapper in sbatch's place runs it (its
-- parent, migadvisor-sbatch or migadvisor), or the sbatch shim ran it in
-- its own place (exec) after starting the wrapper beside it, its child
-- (named sbatch, the shim's, until it has started the wrapper).
function M.advised()
	local f = io.open("/proc/self/stat", "r")
	if not f then
		return false
	end
	local pid, ppid = string.match(f:read("*l") or "", "^(%d+) %(.*%) %S+ (%d+)")
	f:close()
	if not pid then
		return false
	end
	if advisers[comm(ppid)] then
		return true
	end
	f = io.open("/proc/self/task/" .. pid .. "/children", "r")
	local children = f and f:read("*a") or ""
	if f then
		f:close()
	end
	for child in string.gmatch(children, "%d+") do
		local name = comm(child)
		if advisers[name] or name == "sbatch" then
			return true
		end
	end
	return false
end

-- The commands the filter advises in: sbatch's scripts, and the sessions
-- salloc and srun make.
local kinds = { sbatch = true, salloc = true, srun = true }

-- set reports whether an option of the command holds a value (Slurm reads
-- one it does not hold as "unset", one of another command as
-- "invalid-context").
local function set(v)
	return v ~= nil and v ~= "unset" and v ~= "invalid-context"
end

-- asks_gpu reports whether a session's options ask for a GPU (the
-- environment's SALLOC_GRES and the like are among them): a session of
-- none has no slice to advise, and starts no process.
function M.asks_gpu(options)
	for _, name in ipairs({ "gpus", "gpus-per-node", "gpus-per-task", "gpus-per-socket" }) do
		if set(options[name]) then
			return true
		end
	end
	local gres = options.gres
	return set(gres) and string.find(gres, "gpu", 1, true) ~= nil
end

-- skip: nothing to do here (inside a job, a step of an existing job, a
-- session of no GPU, not a command it advises in, turned off, or advised
-- by migadvisor's sbatch shim or wrapper).
local function skip(options)
	if os.getenv("SLURM_JOB_ID") ~= nil or os.getenv("MIGADVISOR_DISABLE") == "1" or not kinds[options.type] then
		return true
	end
	if options.type ~= "sbatch" and (options.type == "srun" and set(options.jobid) or not M.asks_gpu(options)) then
		return true
	end
	return M.advised()
end

-- db is the user's history as migadvisor-sbatch finds it (internal/xdg):
-- $MIGADVISOR_DB, else $XDG_DATA_HOME/migadvisor/history.db, else under
-- ~/.local/share, else history.db here.
function M.db()
	local db = os.getenv("MIGADVISOR_DB") or ""
	if db ~= "" then
		return db
	end
	local dir = os.getenv("XDG_DATA_HOME") or ""
	if dir == "" then
		local home = os.getenv("HOME") or ""
		if home == "" then
			return "history.db"
		end
		dir = home .. "/.local/share"
	end
	return dir .. "/migadvisor/history.db"
end

-- checksum is the script's bytes as a number in base 256 mod 2^36-5, two
-- bytes a step: every product stays below 2^52, exact in Lua 5.1's doubles
-- (advisor/app/wrapper's filterChecksum computes the same).
function M.checksum(s)
	local byte, P = string.byte, 68719476731
	local h, n, i = 0, #s, 1
	while i + 7 <= n do
		local a, b, c, d, e, f, g, k = byte(s, i, i + 7)
		h = (h * 65536 + a * 256 + b) % P
		h = (h * 65536 + c * 256 + d) % P
		h = (h * 65536 + e * 256 + f) % P
		h = (h * 65536 + g * 256 + k) % P
		i = i + 8
	end
	for j = i, n do
		h = (h * 256 + byte(s, j)) % P
	end
	return h
end

-- read_regular is the whole of the file at path where it is a regular
-- file of at most max bytes; nil for anything else. Nothing the filter
-- reads may hold sbatch longer than sbatch's own read of the script did,
-- and Lua has no stat and no timeout: opened to read, a FIFO waits for a
-- writer, and sbatch has read the script before the filter runs, so the
-- writer of one (sbatch <(...)) is gone and sbatch would wait for ever. So
-- the file is opened to read and write, which on Linux never waits (it is
-- never written, and its times do not change), and read only where it can
-- be sought: a FIFO, a socket or a terminal cannot. A file this user may
-- not write is not read here (nil): filter-advise, under its hard time
-- limit, answers for it instead. At most max + 1 bytes are read, whatever
-- the size said (a device that seeks, such as /dev/zero, has no end).
function M.read_regular(path, max)
	local f = io.open(path, "r+b")
	if not f then
		return nil
	end
	local size = f:seek("end")
	local data
	if size == 0 then
		data = f:read(1) == nil and "" or nil -- a device of no size may still have bytes
	elseif size and size <= max and f:seek("set") then
		data = f:read(max + 1)
	end
	f:close()
	if not data or #data ~= size then
		return nil
	end
	return data
end

-- key is the submission's in the cache: the script's path, size and
-- checksum, then the options and environment the advice reads, by tabs;
-- nil where a value holds a tab or a line break, or the script is not a
-- regular file M.read_regular can read or is over M.max_script bytes (its
-- checksum would cost more than the process).
M.max_script = 256 * 1024
function M.key(options)
	local argv = options.argv
	local script = type(argv) == "table" and argv[1] or nil
	local parts = { "", "0", "0" }
	if script then
		local data = M.read_regular(script, M.max_script)
		if not data then
			return nil
		end
		parts = { script, string.format("%d", #data), string.format("%d", M.checksum(data)) }
	end
	for _, name in ipairs(M.key_options) do
		parts[#parts + 1] = tostring(options[name] or "")
	end
	for _, name in ipairs(M.key_env) do
		parts[#parts + 1] = os.getenv(name) or ""
	end
	for _, v in ipairs(parts) do
		if string.find(v, "[\t\r\n]") then
			return nil
		end
	end
	return table.concat(parts, "\t")
end

-- session_key is the key of an salloc's or srun's request in the cache:
-- the command, its program (srun's job name without -J) and "session"
-- (where a script's key has digits), then the options and environment the
-- advice reads, and srun's SLURM_JOB_NAME; nil where a value holds a tab or
-- a line break.
function M.session_key(options)
	local argv = options.argv
	local parts = { tostring(options.type), type(argv) == "table" and argv[1] or "", "session" }
	for _, name in ipairs(M.key_options) do
		parts[#parts + 1] = tostring(options[name] or "")
	end
	for _, name in ipairs(M.key_env) do
		parts[#parts + 1] = os.getenv(name) or ""
	end
	parts[#parts + 1] = os.getenv("SLURM_JOB_NAME") or ""
	for _, v in ipairs(parts) do
		if string.find(v, "[\t\r\n]") then
			return nil
		end
	end
	return table.concat(parts, "\t")
end

-- lookup is the answer cached in file for key, younger than M.ttl at now:
-- its advice, its "set" lines and its draft ("" for none); nil for none.
-- The file (advisor/app/wrapper/filtercache.go): a first line, then entries of
-- a line "entry WRITTEN KEYLEN ADVICELEN SETSLEN DRAFTLEN OPTIONSLEN" and
-- that many bytes, then "\n"; then "end\n". The options are what a refresh
-- answers the entry again of: the filter skips them. The file is read as
-- the script is (M.read_regular), up to M.max_cache bytes: more than
-- migadvisor-sbatch writes (filterCacheEntries of filterCacheMaxEntry).
M.max_cache = 1024 * 1024
function M.lookup(file, key, now)
	local data = M.read_regular(file, M.max_cache)
	local magic = "migadvisor-clifilter 2\n"
	if not data or string.sub(data, 1, #magic) ~= magic or string.sub(data, -4) ~= "end\n" then
		return nil
	end
	local pos = #magic + 1
	while true do
		local w, kl, al, sl, dl, ol, p = string.match(data, "^entry (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)\n()", pos)
		if not w then
			return nil
		end
		w, kl, al, sl, dl = tonumber(w), tonumber(kl), tonumber(al), tonumber(sl), tonumber(dl)
		local e = p + kl + al + sl + dl + tonumber(ol)
		if string.sub(data, e, e) ~= "\n" then
			return nil -- not the file it says it is
		end
		if kl == #key and now - w < M.ttl and w <= now + 60 and string.sub(data, p, p + kl - 1) == key then
			local a, s, d = p + kl, p + kl + al, p + kl + al + sl
			return string.sub(data, a, s - 1), string.sub(data, s, d - 1), string.sub(data, d, d + dl - 1)
		end
		pos = e + 1
	end
end

-- ask runs filter-advise: its answer, whole. session: the command of an
-- interactive session (salloc, srun), nil for sbatch.
local function ask(options, key, session)
	local f = io.open(M.bin, "r")
	if not f then
		error(M.bin .. " is not installed", 0)
	end
	f:close()
	local json = M.quote(slurm.json_cli_options(options))
	if not json then
		error("the options hold a NUL byte", 0)
	end
	local cmd = "exec " .. M.quote(M.bin) .. " filter-advise "
	if session then
		cmd = cmd .. "--type=" .. session .. " "
	end
	cmd = cmd .. json
	if key then
		cmd = cmd .. " " .. M.quote(key)
	end
	local p = assert(io.popen(cmd, "r"))
	local out = p:read("*a") or ""
	p:close()
	-- Nothing of an answer cut short: "ok" ends a whole one.
	if not string.find(out, "\nok\n$") and out ~= "ok\n" then
		error("migadvisor-sbatch gave no answer", 0)
	end
	return out
end

-- parse is an answer's options to set, and its draft (nil for none).
local function parse(answer)
	local sets, draft = {}, nil
	for line in string.gmatch(answer, "[^\n]+") do
		local name, value = string.match(line, "^set\t([^\t]+)\t(.*)$")
		if name then
			table.insert(sets, { name, value })
		else
			draft = string.match(line, "^record\t(.+)$") or draft
		end
	end
	return sets, draft
end

-- apply sets the options, all or none.
local function apply(options, sets)
	local before = {}
	local ok, err = pcall(function()
		for i, s in ipairs(sets) do
			before[i] = options[s[1]]
			options[s[1]] = s[2]
		end
	end)
	if not ok then
		for i = #before, 1, -1 do
			pcall(function()
				options[sets[i][1]] = before[i]
			end)
		end
		warn("the advice could not be applied, so the job is submitted unchanged: " .. tostring(err))
	end
end

local function advise(options, offset)
	drafts[offset] = nil
	if offset ~= 0 or skip(options) then
		return
	end
	local session = options.type ~= "sbatch" and options.type or nil
	local key
	if session then
		key = M.session_key(options)
	else
		key = M.key(options)
	end
	local advice, sets, draft
	if key then
		advice, sets, draft = M.lookup(M.db() .. ".clifilter", key, os.time())
	end
	if advice then -- as filter-advise answered it before
		io.stderr:write(advice)
		sets = parse(sets)
		if draft == "" then
			draft = nil
		end
	else
		sets, draft = parse(ask(options, key, session))
	end
	if #sets > 0 then
		apply(options, sets)
	end
	if not session then -- a session has no record
		drafts[offset] = draft
	end
end

-- spool writes rec, the record of job id, into the history's spool as
-- advisor/base/history's Spool reads it: a file named by the time and the job
-- (names sort by time, and no two jobs share one), written whole under a
-- name Spool skips (a leading dot), then renamed. False where it could not.
function M.spool(rec, id, now)
	local dir = M.db() .. ".spool/"
	local name = string.format("%d000000000-%s.json", now, id)
	local tmp = dir .. "." .. name .. ".tmp"
	local f = io.open(tmp, "w")
	if not f then
		return false
	end
	local written = f:write(rec)
	if not f:close() or not written or not os.rename(tmp, dir .. name) then
		os.remove(tmp)
		return false
	end
	return true
end

-- filled is the draft with its job id, submitted now.
function M.filled(draft, id, now)
	local i, j = string.find(draft, '"JobID":""', 1, true)
	if not i then
		return nil
	end
	local rec = string.sub(draft, 1, i - 1) .. '"JobID":"' .. id .. '"' .. string.sub(draft, j + 1)
	return (string.gsub(rec, '"Submitted":"[^"]*"', '"Submitted":"' .. os.date("!%Y-%m-%dT%H:%M:%SZ", now) .. '"', 1))
end

local function record(offset, jobid)
	local draft = drafts[offset]
	drafts[offset] = nil
	if not draft or os.getenv("SLURM_JOB_ID") ~= nil then
		return
	end
	local id, now = string.format("%d", jobid), os.time()
	local rec = M.filled(draft, id, now)
	if rec and M.spool(rec, id, now) then
		return
	end
	-- No spool to write in (a history not made yet): migadvisor-sbatch
	-- makes it, in the background, its streams /dev/null: sbatch returns
	-- now, and no pipe of the caller's waits for the record.
	local qid, qdraft = M.quote(id), M.quote(draft)
	if qdraft then
		os.execute(M.quote(M.bin) .. " filter-record " .. qid .. " " .. qdraft .. " </dev/null >/dev/null 2>&1 &")
	end
end

function M.pre_submit(options, offset)
	local ok, err = pcall(advise, options, tonumber(offset) or 0)
	if not ok then
		warn("no advice this time: " .. tostring(err))
	end
	return slurm.SUCCESS
end

function M.post_submit(offset, jobid)
	local ok, err = pcall(record, tonumber(offset) or 0, jobid)
	if not ok then
		warn("this submission is not in the history: " .. tostring(err))
	end
	return slurm.SUCCESS
end

function slurm_cli_setup_defaults(options, early_pass)
	return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
	return M.pre_submit(options, offset)
end

function slurm_cli_post_submit(offset, jobid, stepid)
	return M.post_submit(offset, jobid)
end
