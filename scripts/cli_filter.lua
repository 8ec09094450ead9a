-- cli_filter.lua: migadvisor's advice at submission, inside Slurm's own
-- sbatch (the cli_filter/lua plugin), for login nodes. `make install` writes
-- it to PREFIX/share/migadvisor/cli_filter.lua with its prefix in it.
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
-- environment, #SBATCH lines) and before it asks slurmctld, runs
-- `PREFIX/libexec/migadvisor/migadvisor-sbatch filter-advise OPTIONS`: the
-- advice goes to sbatch's stderr, before "Submitted batch job"; on stdout come
-- the options to set (only where the user consented: MIGADVISOR_APPLY=1 in
-- the environment), the submission's record without its job id, and "ok".
-- One submission, with the options changed in place. slurm_cli_post_submit
-- starts `migadvisor-sbatch filter-record JOBID RECORD` in the background
-- and returns: the record, with its job id, goes to the user's history's spool,
-- where collect links it to that job exactly.
--
-- It never fails or blocks a submission: every hook returns slurm.SUCCESS,
-- any error costs at most one line on stderr (none with MIGADVISOR_QUIET=1),
-- and migadvisor-sbatch has a hard time limit. It does nothing inside a job
-- (SLURM_JOB_ID set: every srun step runs the filter), for salloc and srun,
-- with MIGADVISOR_DISABLE=1, or for components of a heterogeneous job but
-- the first. Plain Lua 5.1: io and os, no modules.

local PREFIX = [==[@PREFIX@]==]

migadvisor = migadvisor or {}
local M = migadvisor
M.bin = PREFIX .. "/libexec/migadvisor/migadvisor-sbatch"

-- The record's draft of each component, from pre_submit to post_submit.
local drafts = {}

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

-- skip: nothing to do here (inside a job, salloc or srun, turned off).
local function skip(options)
	return os.getenv("SLURM_JOB_ID") ~= nil or os.getenv("MIGADVISOR_DISABLE") == "1" or options.type ~= "sbatch"
end

local function advise(options, offset)
	drafts[offset] = nil
	if offset ~= 0 or skip(options) then
		return
	end
	local f = io.open(M.bin, "r")
	if not f then
		error(M.bin .. " is not installed", 0)
	end
	f:close()
	local json = M.quote(slurm.json_cli_options(options))
	if not json then
		error("sbatch's options hold a NUL byte", 0)
	end
	local p = assert(io.popen("exec " .. M.quote(M.bin) .. " filter-advise " .. json, "r"))
	local out = p:read("*a") or ""
	p:close()
	-- Nothing of an answer cut short: "ok" ends a whole one.
	if not string.find(out, "\nok\n$") and out ~= "ok\n" then
		error("migadvisor-sbatch gave no answer", 0)
	end
	local sets, draft = {}, nil
	for line in string.gmatch(out, "[^\n]+") do
		local name, value = string.match(line, "^set\t([^\t]+)\t(.*)$")
		if name then
			table.insert(sets, { name, value })
		else
			draft = string.match(line, "^record\t(.+)$") or draft
		end
	end
	if #sets > 0 then
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
	drafts[offset] = draft
end

local function record(offset, jobid)
	local draft = drafts[offset]
	drafts[offset] = nil
	if not draft or os.getenv("SLURM_JOB_ID") ~= nil then
		return
	end
	local id, rec = M.quote(string.format("%d", jobid)), M.quote(draft)
	if not rec then
		return
	end
	-- In the background, its streams /dev/null: sbatch returns now, and no
	-- pipe of the caller's waits for the record.
	os.execute(M.quote(M.bin) .. " filter-record " .. id .. " " .. rec .. " </dev/null >/dev/null 2>&1 &")
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
