--[[
xmem_lib.lua — what job_submit.lua (controller, authoritative) and cli_filter.lua (client,
srun steps) share: reading the site policy that `xmemd --render-policy` writes, reading GPU
requests, and turning a memory limit into a GPU share. Installed next to slurm.conf.
]]

local M = {}

--[[ The one way xmem reads a number from the client or a record (docs/enforcement.md
"Numbers"): 1 to 15 plain decimal digits, nothing else (no sign, blank, exponent, hex,
fraction, unit), and at most max. tonumber() also takes "1e3", "0x400", " 12", "1.5":
strtoull-based C does not, so the controller and the node would read one text two ways. 15
digits stay below 2^53, exact in Lua 5.1's double. plugin/value.c's xmem_decimal_parse is
the same rule. Returns the number or nil. ]]
function M.decimal(s, max)
  if type(s) ~= "string" or #s < 1 or #s > 15 or not s:match("^[0-9]+$") then return nil end
  local n = tonumber(s)
  if n == nil or n > max then return nil end
  return n
end

local function check_gpu(where, g)
  if type(g) ~= "table" then return where .. " is not a table" end
  if type(g.memory_mb) ~= "number" or g.memory_mb <= 0 then return where .. ".memory_mb must be a positive number" end
  if type(g.shards_per_gpu) ~= "number" or g.shards_per_gpu < 1 then return where .. ".shards_per_gpu must be >= 1" end
  if type(g.mps_per_gpu) ~= "number" or g.mps_per_gpu < 1 then return where .. ".mps_per_gpu must be >= 1" end
  if g.whole_as_shares ~= nil and type(g.whole_as_shares) ~= "boolean" then
    return where .. ".whole_as_shares must be true or false"
  end
  return nil
end

-- Loads and checks the policy; returns policy or nil and a one-line reason.
function M.load_policy(dir)
  local path = dir .. "/xmem_policy.lua"
  local ok, p = pcall(dofile, path)
  if not ok then
    return nil, "cannot load " .. path .. ": " .. tostring(p) .. " (render it with xmemd --render-policy)"
  end
  if type(p) ~= "table" or p.version ~= 1 then
    return nil, path .. ": not a version 1 xmem policy (re-render it with xmemd --render-policy)"
  end
  if p.mode ~= "shard" and p.mode ~= "mps" and p.mode ~= "whole" then
    return nil, path .. ": mode must be shard, mps or whole, not " .. tostring(p.mode)
  end
  if type(p.margin_percent) ~= "number" or p.margin_percent < 0 then
    return nil, path .. ": margin_percent must be a number >= 0"
  end
  if type(p.whole_gpu_above_percent) ~= "number" or p.whole_gpu_above_percent <= 0 then
    return nil, path .. ": whole_gpu_above_percent must be a positive number"
  end
  if type(p.daemon_uid) ~= "number" then
    return nil, path .. ": daemon_uid must be a number"
  end
  local err = check_gpu("default", p.default)
  for name, g in pairs(p.partitions or {}) do
    err = err or check_gpu("partitions." .. tostring(name), g)
  end
  for name, m in pairs(p.margins or {}) do
    if type(m) ~= "table" or type(m.percent) ~= "number" or m.percent < 0 then
      err = err or ("margins." .. tostring(name) .. ".percent must be a number >= 0")
    end
  end
  if err then return nil, path .. ": " .. err end
  return p
end

-- The GPU description for a partition (a comma list: the first one named in the policy).
function M.partition_gpu(policy, partition)
  if partition then
    for p in string.gmatch(partition, "[^,]+") do
      if policy.partitions and policy.partitions[p] then return policy.partitions[p], p end
    end
  end
  return policy.default, partition or "default"
end

--[[ A whole GPU in the form a partition that packs holds it: every share of one GPU
("shard:10" where a GPU has 10 shards, "mps:100"), or nil under the policy 'whole'. Slurm
22.05 counts shares per GPU, so no other share job is placed beside it; a gpu:1 job would
be (docs/enforcement.md, "Whole GPUs in a partition that packs"). The held form of an
estimate and a job kept whole use this definition; the OOM rerun (plugin/requeue.c) asks for
the same form, counted from the node's Gres=. ]]
function M.whole_share(policy, partition)
  local gpu = M.partition_gpu(policy, partition)
  if policy.mode == "shard" then return "shard:" .. tostring(gpu.shards_per_gpu) end
  if policy.mode == "mps" then return "mps:" .. tostring(gpu.mps_per_gpu) end
  return nil
end

-- The form a job that keeps one whole untyped GPU per node is queued in: whole_share, unless
-- its partition's target turned it off (whole_as_shares = false: nodes without shares, or a
-- site that mixes gpu:1 and share jobs on purpose). A policy rendered before the key existed
-- has it on.
function M.kept_whole_share(policy, partition)
  if M.partition_gpu(policy, partition).whole_as_shares == false then return nil end
  return M.whole_share(policy, partition)
end

-- Where a level stands in the policy's list (weakest first, rendered from enforcement.h).
local function level_rank(policy, name)
  for i, n in ipairs(policy.enforcement_levels or {}) do
    if n == name then return i end
  end
  return nil
end

--[[ The site's required enforcement level (docs/enforcement.md). Each partition declares in
xmem.yaml what its nodes hold a share to (gpu.enforcement, from partition_gpu); below the
required level a job keeps its whole GPU rather than share one unsafely. Returns nil when the
job may be packed, else the line that tells the user why not. A policy rendered before the
levels existed (no enforcement_levels) requires nothing. ]]
function M.enforcement_shortfall(policy, gpu, partition)
  local required = policy.require_enforcement or "none"
  if required == "none" then return nil end
  local have = gpu.enforcement or "client"
  local rh, rr = level_rank(policy, have), level_rank(policy, required)
  if rr == nil or rh == nil then
    return string.format("the policy's enforcement levels are malformed (%s, %s); the job keeps its whole GPU "
      .. "(re-render the policy with xmemd --render-policy)", tostring(have), tostring(required))
  end
  if rh >= rr then return nil end
  return string.format("partition %s holds a GPU share only at enforcement level %s, the site requires %s: "
    .. "the job keeps its whole GPU (submit to a partition whose nodes offer %s, or ask the admin)",
    tostring(partition), have, required, required)
end

-- Reads one GPU request field ("gres:gpu:1", "gpu:a100:2", "gres:shard:3,gres:gpu:1").
-- Returns the number of GPUs and whether a shard/mps share is asked for.
function M.gpus_in(tres)
  local n, shared = 0, false
  if not tres or tres == "" then return 0, false end
  for item in string.gmatch(tres, "[^,]+") do
    item = item:gsub("^gres[:/]", "")
    local name, rest = item:match("^([%w_]+)(.*)$")
    if name == "shard" or name == "mps" then
      shared = true
    elseif name == "gpu" then
      local count = rest:match(":(%d+)$")
      n = n + (tonumber(count) or 1)
    end
  end
  return n, shared
end

-- A job's GPU request fields as xmem writes them into root's AdminComment: each item parsed
-- ("gres:" NAME [":" TYPE] [":" COUNT], or "gres/..."), written back in that one form, and
-- anything else written "?". A GRES string is never copied: raw libslurm lets a user submit
-- any text there, which once put a forged requeue mark into root's record (issue 26, L6).
function M.request_text(fields)
  local out = {}
  for _, tres in ipairs(fields) do
    for item in string.gmatch(tres or "", "[^,]+") do
      local body = item:gsub("^gres[:/]", "")
      local name, typ, count = body:match("^([%a_][%w_]*):([%w_.-]+):(%d+)$")
      if not name then name, count = body:match("^([%a_][%w_]*):(%d+)$") end
      if not name then name, typ = body:match("^([%a_][%w_]*):([%w_.-]+)$") end
      if not name then name = body:match("^([%a_][%w_]*)$") end
      if name and #body <= 64 and (count == nil or #count <= 6) then
        out[#out + 1] = "gres:" .. name .. (typ and (":" .. typ) or "") .. (count and (":" .. count) or "")
      else
        out[#out + 1] = "?"
      end
    end
  end
  return table.concat(out, " ")
end

-- The GPU type of a request's gpu item ("gres:gpu:a100:1", "gres/gpu:a100", "gpu:1"), or nil.
function M.gpu_type(tres)
  for item in string.gmatch(tres or "", "[^,]+") do
    local rest = item:gsub("^gres[:/]", ""):match("^gpu:(.*)$")
    if rest then
      local t = rest:match("^([^:]+):") or rest
      if not t:match("^%d+$") then return t end
      return nil
    end
  end
  return nil
end

-- A count Slurm left unset (nil, 0, NO_VAL, or NO_VAL16 = 65534 in the 16-bit fields such
-- as ntasks_per_node) reads as `unset`; so does one past any site's size (the plugin's
-- XMEM_SHAPE_MAX, 100000).
local function count_field(v, unset)
  if type(v) ~= "number" or v <= 0 or v >= 65534 or v ~= math.floor(v) then return unset end
  return v
end

local function ceil_div(a, b) return math.floor((a + b - 1) / b) end

--[[ The shape of a job's GPU request, as the SPANK plugin's xmem_job_shape_of reads it from
sbatch's command line: GPUs on each node (tres_per_node; tres_per_job over the nodes;
tres_per_task times the tasks per node: ntasks_per_node, else num_tasks over the nodes,
else one), the minimum node count, the GPU type, whether it is a share already, and the
canonical text the decision is bound to ("gpu:1", "gpu:a100:1", "gpu:2", "gpu:1:nodes:2";
xmem_job_shape_text writes the same). ]]
function M.request_shape(job)
  local nodes = count_field(job.min_nodes, 1)
  local tasks = count_field(job.num_tasks, 0)
  local per_node_tasks = count_field(job.ntasks_per_node, 0)
  if per_node_tasks == 0 then per_node_tasks = tasks > 0 and ceil_div(tasks, nodes) or 1 end
  local n1, sh1 = M.gpus_in(job.tres_per_node)
  local n2, sh2 = M.gpus_in(job.tres_per_job)
  local n3, sh3 = M.gpus_in(job.tres_per_task)
  local s = { nodes = nodes, shared = sh1 or sh2 or sh3,
    gpus_per_node = n1 + ceil_div(n2, nodes) + n3 * per_node_tasks,
    type = M.gpu_type(job.tres_per_node) or M.gpu_type(job.tres_per_job) or M.gpu_type(job.tres_per_task) }
  -- A share already (srun outside a job: cli_filter.lua asked for it in place of gpu:1)
  -- reads as the one GPU it stands for, as the plugin signed it.
  s.text = "gpu:" .. (s.type and (s.type .. ":") or "") .. math.max(1, s.gpus_per_node)
    .. (nodes > 1 and (":nodes:" .. nodes) or "")
  return s
end

-- The shape a canonical request text names ("gpu:1", "gpu:a100:2:nodes:2", a held job's
-- mark), as request_shape returns it (gpus_per_node, nodes), or nil.
function M.shape_of_text(text)
  local body, nodes = (text or ""):match("^gpu:(.-):nodes:(%d+)$")
  body = body or (text or ""):match("^gpu:(.*)$")
  local count = body and (body:match("^(%d+)$") or body:match("^[^:]+:(%d+)$"))
  if count == nil then return nil end
  return { gpus_per_node = tonumber(count), nodes = tonumber(nodes or "1"), text = text }
end

-- Why a job of `ranks` ranks (the decision's) cannot have a share per GPU: more ranks than
-- GPUs (srun -n 4 on 2 GPUs) would put several on one GPU's share, each held to the limit
-- of one. nil when they fit. A share already (srun outside a job) stands for one GPU per node.
function M.ranks_why(ranks, shape)
  local gpus = math.max(1, shape.gpus_per_node) * shape.nodes
  if (ranks or 1) <= gpus then return nil end
  return string.format("the job runs %d ranks on %d GPU%s: several ranks would share one GPU's"
    .. " share; it keeps its whole GPUs", ranks, gpus, gpus > 1 and "s" or "")
end

--[[ Why Slurm cannot hold this multi-GPU request as GPU shares (one line for the user and
the job's Comment), or nil when it can: one GPU on each node becomes a share of that GPU on
every node. Several GPUs on one node stay whole: Slurm 22.05 allocates a job's shards (and
MPS shares) on a node from one GPU only (measured in docs/slurm.md, "Multi-GPU jobs"), so
their ranks would share one GPU. ]]
function M.multi_gpu_why(shape)
  if shape.gpus_per_node <= 1 then return nil end
  return string.format("%d GPUs on one node stay whole: Slurm 22.05 gives a job's shards on a node"
    .. " from one GPU only, so its %d ranks would share one GPU (Slurm 23.11's"
    .. " SelectTypeParameters=MULTIPLE_SHARING_GRES_PJ lets a job hold shares of several GPUs"
    .. " of a node; xmem does not use it yet)", shape.gpus_per_node, shape.gpus_per_node)
end

-- The fields of a decision payload ("xmem-decision v1 k=v k=v ..."), or nil and why. Every
-- key is known and given once: a value smuggling a second "uid=" must not override the first.
-- A decision without "dir" or "env" (an xmemd older than this script) is incomplete:
-- refused. "envnames" lists the variables "env" hashes (xmemd's list, signed with it).
local DECISION_KEYS = { uid = true, request = true, peak = true, limit = true, gpu = true,
  script = true, dir = true, gres = true, envnames = true, env = true, expires = true, job = true,
  ranks = true }
function M.parse_decision(payload)
  local body = payload:match("^xmem%-decision v1 (.*)$")
  if body == nil then return nil, "not a version 1 xmem decision" end
  local d = {}
  for word in body:gmatch("%S+") do
    local k, v = word:match("^(%w+)=(%S+)$")
    if k == nil then return nil, "malformed decision field '" .. word .. "'" end
    if not DECISION_KEYS[k] then return nil, "unknown decision field '" .. k .. "'" end
    if d[k] ~= nil then return nil, "decision field '" .. k .. "' given twice" end
    d[k] = v
  end
  local BIG = 999999999999999
  d.uid, d.peak = M.decimal(d.uid, 4294967295), M.decimal(d.peak, BIG)
  d.limit, d.expires = M.decimal(d.limit, BIG), M.decimal(d.expires, BIG)
  d.request = d.request and M.decimal(d.request, BIG)
  -- A held job's narrowing names its job (docs/async.md); a decision at submission does not.
  if d.job ~= nil then
    d.job = M.decimal(d.job, 4294967295)
    if d.job == nil then return nil, "malformed job id in decision: " .. payload end
  end
  -- The ranks the estimate was profiled as (past one; docs/slurm.md, "Multi-GPU jobs").
  if d.ranks ~= nil then
    d.ranks = M.decimal(d.ranks, 100000)
    if d.ranks == nil then return nil, "malformed ranks in decision: " .. payload end
  end
  d.ranks = d.ranks or 1
  if d.uid == nil or d.limit == nil or d.expires == nil or d.script == nil or d.dir == nil
    or d.gres == nil or d.env == nil or d.envnames == nil or not d.envnames:match("^[%u%d_:]+$") then
    return nil, "incomplete decision: " .. payload
  end
  return d
end

-- The margin for a job on `gpu` under `account` (may be nil): the account's own margin for
-- this GPU type, else the GPU type's, both learnt by `xmem calibrate` (policy.margins), else
-- the site's margin_percent.
function M.margin(policy, gpu, account)
  local m = policy.margins and gpu.gpu and policy.margins[gpu.gpu]
  if type(m) ~= "table" then return policy.margin_percent end
  if account and type(m.accounts) == "table" and type(m.accounts[account]) == "number" then
    return m.accounts[account]
  end
  return m.percent
end

--[[ Turns a limit into a request under the policy. Returns a table:
  kind = "shard" | "mps" | "whole", count (shards or MPS percentage), limit_mb (the limit: what
  the job is held to, the per-process MPS memory limit), share_mb (the share size: the limit
  plus the margin, what the share is sized to), margin (the percent applied),
  gres ("shard:3", "mps:30" or nil), why (one line for logs and the user).
  account: the job's Slurm account, or nil (it picks an account's calibrated margin). ]]
function M.share(policy, partition, limit_mb, account)
  local gpu, pname = M.partition_gpu(policy, partition)
  local margin = M.margin(policy, gpu, account)
  local share_mb = math.ceil(limit_mb * (100 + margin) / 100)
  local r = { limit_mb = limit_mb, share_mb = share_mb, gpu = gpu, partition = pname, kind = "whole",
    margin = margin }
  -- "limit L MiB + M% margin = share size S MiB": the two quantities keep their own names.
  local sized = string.format("limit %d MiB + %d%% margin = share size %d MiB", limit_mb, margin, share_mb)
  if share_mb * 100 > gpu.memory_mb * policy.whole_gpu_above_percent then
    r.why = string.format("%s, above %d%% of the %s's %d MiB: the job keeps its whole GPU",
      sized, policy.whole_gpu_above_percent, gpu.gpu or "GPU", gpu.memory_mb)
    r.too_big = true
    return r
  end
  if policy.mode == "shard" then
    local per = gpu.memory_mb / gpu.shards_per_gpu
    r.count = math.min(math.max(1, math.ceil(share_mb / per)), gpu.shards_per_gpu)
    r.kind, r.gres = "shard", "shard:" .. r.count
  elseif policy.mode == "mps" then
    r.count = math.min(math.max(1, ceil_div(share_mb * gpu.mps_per_gpu, gpu.memory_mb)), gpu.mps_per_gpu)
    r.kind, r.gres = "mps", "mps:" .. r.count
  else
    r.why = "site policy 'whole': the job keeps its whole GPU"
    return r
  end
  r.why = string.format("%s of the %s's %d MiB: %s", sized, gpu.gpu or "GPU", gpu.memory_mb, r.gres)
  return r
end

return M
