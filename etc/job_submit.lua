--[[
job_submit.lua — xmem's controller side (slurmctld, JobSubmitPlugins=lua). Authoritative:
it verifies the MUNGE-signed decision that xmemd gave the submitting user, applies the
site policy rendered by `xmemd --render-policy` (xmem_policy.lua next to slurm.conf), and
rewrites a GPU request into GPU shares (shard or mps: one GPU, or one GPU on each of several
nodes, docs/slurm.md "Multi-GPU jobs"). Anything it cannot trust or understand leaves the
job exactly as submitted, with the reason in the controller log.

The SPANK plugin passes XMEM_* values in job_desc.spank_job_env. They come from the client
and are treated as user input: only the signed decision's limit is believed; a declared
budget (--xmem=SIZE, unsigned) is the user's own risk, capped at the GPU.
]]

-- This script's directory (the one of slurm.conf), where xmem_lib.lua and the policy live.
local DIR = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
  or (os.getenv("SLURM_CONF") or "/etc/slurm/slurm.conf"):match("^(.*)/[^/]*$") or "/etc/slurm"
local ok_lib, xmem = pcall(dofile, DIR .. "/xmem_lib.lua")

local function log(fmt, ...) slurm.log_info("xmem: " .. fmt, ...) end

-- spank_job_env is indexed from 0 in 22.05: pairs, not ipairs.
local function spank_env(job_desc)
  local env = {}
  if job_desc.spank_job_env == nil then return env end
  for _, kv in pairs(job_desc.spank_job_env) do
    local k, v = tostring(kv):match("^(XMEM_[%u_]+)=(.*)$")
    if k then env[k] = v end
  end
  return env
end

-- The job's GPU request: its kind (none, shared, single, multi), its text for the record, and
-- its shape (xmem.request_shape: GPUs per node, nodes, the text a decision is bound to).
local function classify(job_desc)
  local shape = xmem.request_shape(job_desc)
  -- Parsed, never copied: it is written into root's AdminComment (xmem_lib.request_text).
  local req = xmem.request_text({ job_desc.tres_per_node or "", job_desc.tres_per_job or "",
    job_desc.tres_per_task or "" })
  if shape.shared then return "shared", req, shape end
  if shape.gpus_per_node == 0 then return "none", req, shape end
  if shape.gpus_per_node ~= 1 or shape.nodes > 1 then return "multi", req, shape end
  return "single", req, shape
end

-- Verifies a decision with unmunge. Returns the payload's fields or nil and why.
local function verify_decision(cred, job_uid, policy)
  if cred == nil or cred == "" then return nil, "no signed decision" end
  if not cred:match("^MUNGE:[%w%+/=:]+$") or #cred > 4096 then return nil, "malformed decision" end
  local tmp = os.tmpname()
  local f = io.open(tmp, "w")
  if not f then return nil, "cannot write " .. tmp end
  f:write(cred)
  f:close()
  local sock = os.getenv("XMEM_MUNGE_SOCKET")
  local cmd = "unmunge --input=" .. tmp
  if sock and sock:match("^[%w/._-]+$") then cmd = cmd .. " --socket=" .. sock end
  local p = io.popen(cmd .. " 2>&1")
  local out = p and p:read("*a") or ""
  if p then p:close() end
  os.remove(tmp)
  local status = out:match("STATUS:%s+([^\n]+)")
  if status == nil or not status:match("^Success") then
    local why = status or out:match("unmunge: ([^\n]+)") or "unmunge failed"
    return nil, "credential rejected by munge: " .. why
  end
  local uid = tonumber(out:match("\nUID:%s+[^\n]*%((%d+)%)"))
  if uid ~= policy.daemon_uid then
    return nil, string.format("decision signed by uid %s, not by xmemd (uid %d)", tostring(uid), policy.daemon_uid)
  end
  local payload = out:match("\n\n(xmem%-decision v1 [^\n]*)")
  if payload == nil then return nil, "credential does not carry an xmem decision" end
  local d, perr = xmem.parse_decision(payload)
  if d == nil then return nil, perr end
  if d.uid ~= job_uid then
    return nil, string.format("decision was made for uid %d, job belongs to uid %d", d.uid, job_uid)
  end
  if d.expires < os.time() then return nil, "decision expired at " .. os.date("!%Y-%m-%dT%H:%M:%SZ", d.expires) end
  return d
end

-- The SHA-256 (hex) of each text, in one sha256sum run, or nil. sha256sum, not Lua:
-- slurmctld's Lua 5.1 has no bit operators, and one fork costs a few ms where arithmetic
-- SHA-256 in Lua would hold the controller for seconds on a large script (docs/slurm.md).
local function sha256_each(texts)
  local files, digests = {}, {}
  for i, text in ipairs(texts) do
    files[i] = os.tmpname()
    local f = io.open(files[i], "wb")
    if f then f:write(text); f:close() end
  end
  local p = io.popen("sha256sum " .. table.concat(files, " ") .. " 2>/dev/null")
  local out = p and p:read("*a") or ""
  if p then p:close() end
  for _, name in ipairs(files) do os.remove(name) end
  for hex in out:gmatch("(%x+)  [^\n]*") do digests[#digests + 1] = hex end
  if #digests ~= #texts then return nil end
  return digests
end

-- The text xmemd hashes into the decision's env (signer.h, request_env_text): each name the
-- decision lists, "NAME=<bytes>:<value>\n" when the job has it, "NAME\n" when not.
local function env_text(names, environment)
  local out = {}
  for name in names:gmatch("[^:]+") do
    local v = environment and environment[name]
    out[#out + 1] = v and string.format("%s=%d:%s\n", name, #v, v) or name .. "\n"
  end
  return table.concat(out)
end

-- What a decision is bound to, read from the job: the SHA-256 of its batch script ("-" for
-- none), of its working directory and of its environment over `envnames` (batch jobs only),
-- and its GPU request. A held job keeps them in its mark (hold_for_estimate), where the
-- narrowing is checked against them: slurm_job_modify sees no script or environment.
-- Returns the facts, or nil and why.
local function job_facts(job_desc, envnames)
  local script, dir = job_desc.script, job_desc.work_dir
  if dir == nil or dir == "" then return nil, "the job names no working directory" end
  local batch = script ~= nil and script ~= ""
  local hex = sha256_each({ script or "", dir, batch and env_text(envnames, job_desc.environment) or "" })
  if hex == nil then return nil, "cannot compute the job's SHA-256 digests (is sha256sum installed?)" end
  return { script = batch and hex[1] or "-", dir = hex[2], env = batch and hex[3] or nil,
    envnames = envnames, gres = xmem.request_shape(job_desc).text, work_dir = dir }
end

-- Was the decision made for this job: its batch script, its working directory, its
-- environment and its GPU request (job_facts)? nil, or why not. The script's digest is "-" for none
-- (srun, salloc); a --wrap job's script is the one sbatch built from the command, which xmemd
-- builds the same way, so a decision for one --wrap command does not fit another. The
-- directory is work_dir as sbatch sent it (--chdir, or the submit directory), the same
-- string the profile ran in: a decision made where big.py is a tiny file does not fit a job
-- run elsewhere. The environment is compared for batch jobs only: slurmctld gives Lua no
-- other job's environment (docs/slurm.md says what stays unbound).
local function decision_mismatch(d, f)
  if d.script ~= f.script then
    return string.format("decision was made for another batch script (sha256 %s, this job's %s)",
      d.script:sub(1, 12), f.script:sub(1, 12))
  end
  if d.dir ~= f.dir then
    return string.format("decision was made in another working directory than this job's %s"
      .. " (sha256 %s, this job's %s)", f.work_dir or "", d.dir:sub(1, 12), f.dir:sub(1, 12))
  end
  if f.env ~= nil and (d.env ~= f.env or d.envnames ~= f.envnames) then
    return string.format("decision was made with other values of %s than this job's"
      .. " (sha256 %s, this job's %s)", d.envnames:gsub(":", ", "), d.env:sub(1, 12), f.env:sub(1, 12))
  end
  if d.gres ~= f.gres then
    return string.format("decision was made for the GPU request %s, this job asks for %s", d.gres, f.gres)
  end
  return nil
end

-- xmem's record goes twice: into the Comment, for the user to read, and into the
-- AdminComment, which only root and Slurm operators can change after submission: the
-- plugin reads only that one (the packing record, then the requeue mark; a user who edits
-- their Comment changes nothing xmem believes). docs/enforcement.md "After an OOM".
-- Appends text to one comment field of the job, after "; " when it holds something.
local function append_to(job_desc, key, text)
  local c = job_desc[key]
  if c and c ~= "" then job_desc[key] = c .. "; " .. text else job_desc[key] = text end
end

local function add_comment(job_desc, text)
  for _, key in ipairs({ "comment", "admin_comment" }) do append_to(job_desc, key, text) end
end

local function mb(bytes) return math.floor((bytes + 1048575) / 1048576) end

-- Replaces the job's GPU request, wherever it was given, by one per-node GRES ("shard:3").
local function request_gres(job_desc, gres)
  if job_desc.tres_per_job and job_desc.tres_per_job ~= "" then job_desc.tres_per_job = "" end
  if job_desc.tres_per_task and job_desc.tres_per_task ~= "" then job_desc.tres_per_task = "" end
  job_desc.tres_per_node = "gres:" .. gres
end

-- Rewrites the request to the share r (from xmem.share).
local function rewrite(job_desc, r, mode, required)
  request_gres(job_desc, r.gres)
  if job_desc.environment ~= nil and mode ~= "check" then
    -- The process is held to the limit itself; the margin only sizes the share (share size).
    job_desc.environment.CUDA_MPS_PINNED_DEVICE_MEM_LIMIT = string.format("0=%dM", r.limit_mb)
    -- The node checks it too: a node below it refuses the packed job (remote_enforce.c).
    if required ~= "none" then job_desc.environment.XMEM_ENFORCE_REQUIRED = required end
  end
end

--[[ The one sizing of a job, at submission and when a held job's estimate arrives
(settle_held): the share its limit asks for under the policy, or why it keeps its request.
job: partition and account (a job_desc or a job_rec). Returns a plan: gres (the share, "shard:3",
or nil: the request stays), r and required (for rewrite), record (the packing record, or the
unchanged one, for the comments), user (a line for the user, or nil), log (the controller's). ]]
local function size_job(policy, job, limit_bytes, peak_bytes, source, mode, req, nodes)
  local gpu = xmem.partition_gpu(policy, job.partition)
  local limit_mb = mb(limit_bytes)
  if mode == "budget" and limit_mb > gpu.memory_mb then
    log("declared budget %d MiB capped at the GPU's %d MiB", limit_mb, gpu.memory_mb)
    limit_mb = gpu.memory_mb
  end
  local r = xmem.share(policy, job.partition, limit_mb, job.account)
  -- nodes=N: the share is per node, one rank on each, each held to the limit.
  local summary = string.format("estimate=%s limit=%dM policy=%s%s",
    peak_bytes and (mb(peak_bytes) .. "M") or source, limit_mb, policy.mode,
    (nodes or 1) > 1 and (" nodes=" .. nodes) or "")
  if mode == "check" or r.gres == nil then
    local why = mode == "check" and "check only" or r.why
    return { record = string.format("xmem: %s request=%s (%s)", summary, req, why),
      user = r.too_big and ("xmem: warning: " .. r.why) or nil,
      log = string.format("%s request=%s unchanged (%s)", summary, req, why) }
  end
  -- Below the site's required level the job keeps its whole GPU. Why a level declared per
  -- partition and not a node feature (--constraint): a constraint no node offers makes sbatch
  -- reject the job, and a job is never lost. The node checks too (XMEM_ENFORCE_REQUIRED).
  local unsafe = xmem.enforcement_shortfall(policy, gpu, r.partition)
  if unsafe then
    return { user = "xmem: " .. unsafe,
      record = string.format("xmem: %s request=%s (unchanged: enforcement %s < required %s)",
        summary, req, tostring(gpu.enforcement), tostring(policy.require_enforcement)),
      log = string.format("%s request=%s unchanged (%s)", summary, req, unsafe) }
  end
  local required = policy.require_enforcement or "none"
  -- The packing record: the node reads the limit and the required level from it, never from
  -- the client's XMEM_* (remote_enforce.c).
  return { gres = r.gres, r = r, required = required,
    record = string.format("xmem: %s%s request=%s->%s", summary,
      required ~= "none" and (" required=" .. required) or "", req, r.gres),
    log = string.format("%s request %s -> %s (%s)", summary, req, r.gres, r.why) }
end

--[[ Asynchronous estimates (docs/async.md). xmemd answered sbatch `pending`: its estimate goes
on after sbatch's interactive budget. The job is queued held, with begin_time at the site's
deadline: slurmctld's own timer releases it unchanged even if xmemd never comes back. Its
request is queued in the share's form for a whole GPU (shard:<shards per GPU>, mps:<per GPU>),
because Slurm 22.05 cannot turn gpu:1 into a shard or mps request after submission, so the
narrowing is a count change. The mark in root's AdminComment names the request and the uid,
and keeps the digests of the job a decision must be bound to (job_facts), which
slurm_job_modify cannot read from the job itself. ]]
local BIG = 999999999999999

local function hold_for_estimate(job_desc, env, policy, job_uid, req)
  local id = xmem.decimal(env.XMEM_PENDING, BIG)
  local envnames = env.XMEM_ENVNAMES or ""
  if id == nil or not envnames:match("^[%u%d_:]+$") then
    log("uid %d: malformed pending estimate '%s'; job left unchanged", job_uid, tostring(env.XMEM_PENDING))
    return slurm.SUCCESS
  end
  local facts, why = job_facts(job_desc, envnames)
  local whole = xmem.whole_share(policy, job_desc.partition)
  if facts == nil or whole == nil then
    why = why or "site policy 'whole': the job keeps its whole GPU"
    log("uid %d: estimate %d not held (%s); job left unchanged", job_uid, id, why)
    add_comment(job_desc, string.format("xmem: policy=%s request=%s (unchanged: %s)", policy.mode, req, why))
    return slurm.SUCCESS
  end
  local deadline = os.time() + (policy.held_deadline_s or 1800)
  job_desc.begin_time = deadline
  request_gres(job_desc, whole)
  job_desc.admin_comment = string.format("xmem: estimating id=%d uid=%d gres=%s held=%s script=%s dir=%s env=%s"
    .. " envnames=%s", id, job_uid, facts.gres, whole, facts.script, facts.dir, facts.env or "-", envnames)
  local until_text = os.date("!%Y-%m-%dT%H:%M:%SZ", deadline)
  append_to(job_desc, "comment", string.format("xmem: estimating (request %d): held until the"
    .. " estimate is ready, at the latest %s", id, until_text))
  slurm.log_user("xmem: the job is held until its estimate is ready (at the latest %s), then sized", until_text)
  log("uid %d: estimate %d pending: job held until %s as %s (was %s)", job_uid, id, until_text, whole, req)
  return slurm.SUCCESS
end

-- The mark hold_for_estimate wrote, read back from root's AdminComment, or nil.
local function held_mark(admin_comment)
  local text = admin_comment or ""
  local id, uid, gres, held, script, dir, env, envnames = text:match("^xmem: estimating id=(%d+) uid=(%d+)"
    .. " gres=(%S+) held=(%S+) script=(%S+) dir=(%x+) env=(%S+) envnames=([%u%d_:]+)")
  if id == nil then return nil end
  return { id = xmem.decimal(id, BIG), uid = xmem.decimal(uid, 4294967295), gres = gres, held = held,
    script = script, dir = dir, env = env ~= "-" and env or nil, envnames = envnames }
end

-- A held job's estimate arrived: root's AdminComment "xmem-decision <credential>" narrows it,
-- "xmem-release <why>" gives back its original request; either way begin_time is now. A
-- decision counts only if xmemd signed it for this job's id, this mark's request and this
-- job's user, bound to the mark's digests: a replay for another job, or a credential of any
-- other uid, changes nothing (the update is refused). Returns a Slurm code.
local function settle_held(job_desc, job_rec, policy, kind, body)
  local mark = held_mark(job_rec.admin_comment)
  local job_id = tostring(job_rec.job_id)
  if mark == nil then
    log("job %s: %s refused: the job is not held for an estimate", job_id, kind)
    return slurm.ERROR
  end
  local original = "gres:" .. mark.gres
  local plan, why
  local function released(text)
    text = text:gsub("%c", "?"):sub(1, 300)
    return { record = string.format("xmem: released (%s) request=%s->%s", text, original, mark.held),
      log = "released: " .. text, user = "xmem: " .. text }
  end
  if kind == "xmem-decision" then
    local d
    d, why = verify_decision(body, job_rec.user_id, policy)
    if d and d.job ~= job_rec.job_id then
      why = string.format("decision was signed for job %s, not job %s", tostring(d.job), job_id)
    elseif d and d.request ~= mark.id then
      why = string.format("decision is for request %s, the job waits for request %d", tostring(d.request), mark.id)
    elseif d then
      why = decision_mismatch(d, mark)
    end
    if why then
      log("job %s: held job's decision refused: %s; nothing changed", job_id, why)
      return slurm.ERROR
    end
    -- More ranks than GPUs: released in its held form, a whole GPU's shares per node.
    local shape = xmem.shape_of_text(mark.gres) or { gpus_per_node = 1, nodes = 1 }
    local too_many = xmem.ranks_why(d.ranks, shape)
    if too_many then
      plan = released(too_many)
    else
      if shape.nodes > 1 then original = "gres:gpu:1" end
      plan = size_job(policy, job_rec, d.limit, d.peak, "estimate", "auto", original, shape.nodes)
    end
  else
    plan = released(body)
  end
  -- Slurm 22.05 cannot turn a shard or mps request back into gpu:1 either: a job that keeps
  -- its request keeps it in its held form, a whole GPU's shards (or mps:100).
  if plan.gres then request_gres(job_desc, plan.gres) end
  job_desc.admin_comment = plan.record
  job_desc.comment = plan.record
  job_desc.begin_time = os.time()
  log("job %s (uid %d, request %d): %s", job_id, mark.uid, mark.id, plan.log)
  return slurm.SUCCESS
end

local function xmem_job_submit(job_desc, submit_uid)
  local env = spank_env(job_desc)
  local mode = env.XMEM_MODE
  if mode == nil or mode == "off" then return slurm.SUCCESS end
  local job_uid = job_desc.user_id
  if job_uid == nil or job_uid == slurm.NO_VAL then job_uid = submit_uid end
  if not ok_lib then
    log("uid %d: %s/xmem_lib.lua: %s; job left unchanged", job_uid, DIR, tostring(xmem))
    return slurm.SUCCESS
  end
  local policy, perr = xmem.load_policy(DIR)
  if policy == nil then
    log("uid %d: %s; job left unchanged", job_uid, perr)
    return slurm.SUCCESS
  end
  local kind, req, shape = classify(job_desc)
  -- srun outside a job: cli_filter already turned gpu:1 into this policy's share so the
  -- step matches the allocation; the controller recomputes it from the decision.
  if kind == "shared" and env.XMEM_ORIGIN == "srun" then kind = "single" end
  -- A share has no GPU type (shard and mps count what gres.conf configured, whatever GPU
  -- it is on): rewriting gpu:a100:1 would drop the type, so a typed request stays whole.
  local gpu_type = shape.type
  if (kind == "single" or kind == "multi") and gpu_type then kind = "typed" end
  -- One GPU on each of several nodes becomes a share per node (one rank each, each held to
  -- the highest rank's limit); several GPUs on one node stay whole (xmem.multi_gpu_why).
  local multi_why = kind == "multi" and xmem.multi_gpu_why(shape)
  if kind == "multi" and not multi_why then
    kind, req = "single", "gres:gpu:1"
  end
  if kind ~= "single" then
    local why = ({ none = "no GPU requested", multi = multi_why,
      shared = "already a GPU share",
      typed = "a share cannot keep the GPU type " .. tostring(gpu_type) .. ": the job keeps its whole GPU" })[kind]
    log("uid %d: %s (%s); request left unchanged", job_uid, why, req)
    if kind == "multi" or kind == "typed" then slurm.log_user("xmem: %s (%s): request left unchanged", why, req) end
    add_comment(job_desc, string.format("xmem: policy=%s request=%s (unchanged: %s)", policy.mode, req, why))
    return slurm.SUCCESS
  end

  local limit_bytes, peak_bytes, source
  if mode == "budget" then
    -- Plain decimal MiB, at most 16 TiB (xmem.decimal: "1e3" or "0x400" is no number here).
    limit_bytes = (xmem.decimal(env.XMEM_LIMIT_MB, 16777216) or 0) * 1048576
    source = "declared"
    if limit_bytes <= 0 then
      log("uid %d: malformed declared budget '%s'; job left unchanged", job_uid, tostring(env.XMEM_LIMIT_MB))
      return slurm.SUCCESS
    end
  else
    if (env.XMEM_DECISION or "") == "" and env.XMEM_PENDING then
      return hold_for_estimate(job_desc, env, policy, job_uid, req)
    end
    local d, why = verify_decision(env.XMEM_DECISION, job_uid, policy)
    if d ~= nil then
      local facts
      facts, why = job_facts(job_desc, d.envnames)
      if facts then why = decision_mismatch(d, facts) end
      if why then d = nil end
    end
    local too_many = d and xmem.ranks_why(d.ranks, shape)
    if too_many then
      log("uid %d: %s (%s); request left unchanged", job_uid, too_many, req)
      slurm.log_user("xmem: %s (%s): request left unchanged", too_many, req)
      add_comment(job_desc, string.format("xmem: policy=%s request=%s (unchanged: %s)", policy.mode, req, too_many))
      return slurm.SUCCESS
    end
    if d == nil then
      log("uid %d: decision ignored: %s; job keeps its original request (%s)", job_uid, why, req)
      slurm.log_user("xmem: the estimate could not be verified (%s); the job keeps its original request", why)
      add_comment(job_desc, string.format("xmem: decision ignored (%s) request=%s", why, req))
      return slurm.SUCCESS
    end
    limit_bytes, peak_bytes, source = d.limit, d.peak, "estimate"
  end

  local plan = size_job(policy, job_desc, limit_bytes, peak_bytes, source, mode, req, shape.nodes)
  if plan.user then slurm.log_user("%s", plan.user) end
  add_comment(job_desc, plan.record)
  log("uid %d: %s", job_uid, plan.log)
  if plan.gres then rewrite(job_desc, plan.r, mode, plan.required) end
  return slurm.SUCCESS
end

--[[ A job that ends up asking for one whole untyped GPU on each node (gpu:1: submitted
without --xmem, or kept whole by xmem for any reason) in a site that packs is queued as every
share of one GPU (xmem.kept_whole_share: shard:10, mps:100). Slurm 22.05 places a gres/gpu
job on a GPU whose shares other jobs hold (docs/enforcement.md, "Whole GPUs in a partition
that packs"); its share count keeps share jobs off a GPU whose shares are all taken. Typed
requests and several GPUs on a node cannot be shares in 22.05: they stay, and can meet
packed neighbours. A job without a batch script whose GPUs are not asked per node (srun or
salloc --gpus=1) stays too: its steps ask --gpus, which cannot name a share. ]]
local function keep_whole_as_shares(job_desc, submit_uid)
  if not ok_lib then return end
  local shape = xmem.request_shape(job_desc)
  if shape.shared or shape.type or shape.gpus_per_node ~= 1 then return end
  local batch = job_desc.script ~= nil and job_desc.script ~= ""
  if not batch and xmem.gpus_in(job_desc.tres_per_node) ~= 1 then return end
  local policy = xmem.load_policy(DIR)
  local whole = policy and xmem.kept_whole_share(policy, job_desc.partition)
  if whole == nil then return end
  local req = xmem.request_text({ job_desc.tres_per_node or "", job_desc.tres_per_job or "",
    job_desc.tres_per_task or "" })
  request_gres(job_desc, whole)
  add_comment(job_desc, string.format("xmem: whole GPU request=%s queued as %s (every share of one GPU:"
    .. " no packed job beside it)", req, whole))
  log("uid %d: whole GPU %s queued as %s, every share of one GPU", submit_uid, req, whole)
end

-- Never lose a job: whatever goes wrong in xmem's part, the job is accepted as it stands.
function slurm_job_submit(job_desc, part_list, submit_uid)
  -- slurmctld takes an AdminComment from any submitter (its check is on update only): a
  -- user's own could carry a forged packing record or requeue mark.
  if submit_uid ~= 0 and job_desc.admin_comment ~= nil and job_desc.admin_comment ~= "" then
    log("uid %d: AdminComment set at submission dropped (only root and operators write it)", submit_uid)
    job_desc.admin_comment = ""
  end
  local ok, err = pcall(xmem_job_submit, job_desc, submit_uid)
  if not ok then log("internal error: %s; job accepted as submitted", tostring(err)) end
  ok, err = pcall(keep_whole_as_shares, job_desc, submit_uid)
  if not ok then log("internal error: %s; the whole GPU stays as requested", tostring(err)) end
  return slurm.SUCCESS
end

-- A packed job's limit was sized for its share: a user who changes its GPU request (a
-- smaller share, or gpu:1 back) would keep a limit made for another request. Only root (the
-- requeue after an OOM sets the rerun's share as root) changes it.
local function xmem_job_modify(job_desc, job_rec, modify_uid)
  local kind, body = (job_desc.admin_comment or ""):match("^(xmem%-%a+) (.*)$")
  if kind == "xmem-decision" or kind == "xmem-release" then
    if modify_uid ~= 0 then
      log("uid %d: job %s: %s refused (only root, xmemd, settles a held job)", modify_uid,
        tostring(job_rec.job_id), kind)
      return slurm.ESLURM_ACCESS_DENIED or slurm.ERROR
    end
    local policy, perr = xmem.load_policy(DIR)
    if policy == nil then
      log("job %s: %s; %s refused", tostring(job_rec.job_id), perr, kind)
      return slurm.ERROR
    end
    return settle_held(job_desc, job_rec, policy, kind, body)
  end
  if modify_uid == 0 then return slurm.SUCCESS end
  local record = job_rec.admin_comment
  if record == nil or not record:match("xmem: estimate=[^;]*request=[^;]*%->") then return slurm.SUCCESS end
  for _, key in ipairs({ "tres_per_node", "tres_per_job", "tres_per_task" }) do
    local v = job_desc[key]
    if v ~= nil and v ~= "" then
      log("uid %d: job %s: change of %s to %s refused (packed by xmem)", modify_uid,
        tostring(job_rec.job_id), key, v)
      -- 22.05's scontrol shows only the code's text ("Access/permission denied"); the line
      -- reaches the user where Slurm passes job_modify's messages on, and the log always.
      slurm.log_user("xmem: job %s: its GPU request was set by xmem with a memory limit for that share and "
        .. "cannot be changed (scancel it and resubmit with --xmem or without it)", tostring(job_rec.job_id))
      return slurm.ESLURM_ACCESS_DENIED or slurm.ERROR
    end
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  local ok, rc = pcall(xmem_job_modify, job_desc, job_rec, modify_uid)
  if not ok then
    log("internal error in job_modify: %s; update allowed", tostring(rc))
    return slurm.SUCCESS
  end
  return rc
end

log("job_submit.lua loaded from %s", DIR)
return slurm.SUCCESS
