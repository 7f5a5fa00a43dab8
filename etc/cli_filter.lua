--[[
cli_filter.lua — xmem's client side (sbatch/salloc/srun, CliFilterPlugins=lua). Not a
security boundary (job_submit.lua is); it keeps srun steps consistent with a resized job:

  * srun --gres=gpu:1 --xmem CMD outside a job: the allocation will be a share, so the
    step must ask for the same share, or it fails with "Step requested GRES not found".
  * srun --gres=gpu:1 inside a job that xmem resized: the step is mapped to the job's share.
  * srun --gres=gpu:1 outside a job, without --xmem or kept whole, where the site packs: the
    allocation will be every share of one GPU (job_submit.lua), so the step asks for that.
  * sbatch/salloc --xmem: tells the user which request the controller will make of it.

The SPANK plugin's --xmem callback runs before slurm_cli_pre_submit and leaves its answer in
this process's environment (XMEM_MODE, XMEM_LIMIT_MB, ...). This script never decodes the
signed decision: MUNGE credentials decode once, and the controller must be the one.
]]

-- This script's directory (the one of slurm.conf), where xmem_lib.lua and the policy live.
local DIR = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$")
  or (os.getenv("SLURM_CONF") or "/etc/slurm/slurm.conf"):match("^(.*)/[^/]*$") or "/etc/slurm"
local ok_lib, xmem = pcall(dofile, DIR .. "/xmem_lib.lua")

-- The GPU share of the running job, from its TresPerNode ("gres:shard:3"), or nil.
local function job_share(jobid)
  if not jobid:match("^%d+$") then return nil end
  local p = io.popen("scontrol show job -o " .. jobid .. " 2>/dev/null")
  if not p then return nil end
  local out = p:read("*a") or ""
  p:close()
  local tres = out:match("TresPerNode=(%S+)")
  if not tres then return nil end
  for item in tres:gmatch("[^,]+") do
    local share = item:match("^gres:((shard:%d+))$") or item:match("^gres:((mps:%d+))$")
    if share then return share end
  end
  return nil
end

-- Does the request ask for exactly one GPU? A step can only swap --gres=gpu:1 for a share
-- (--gpus and a --gres share do not combine), so steps pass gres_only.
local function one_gpu(options, gres_only)
  local n, shared = xmem.gpus_in(options.gres)
  local g = options.gpus
  if g ~= nil and g ~= "" then
    if gres_only then return false end
    n = n + (tonumber(g:match("(%d+)$")) or 1)
  end
  -- A typed GPU (gpu:a100:1) stays whole, as job_submit.lua keeps it: a share has no type.
  if xmem.gpu_type(options.gres) or (g and g ~= "" and xmem.gpu_type("gpu:" .. g)) then return false end
  return n == 1 and not shared
end

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

-- The share xmem sizes the job to from the --xmem answer in this process's environment, or
-- nil when it keeps the whole GPU (no --xmem, --xmem=check, too big, below the required level).
local function sized_share(policy, options)
  local mode, limit = os.getenv("XMEM_MODE"), tonumber(os.getenv("XMEM_LIMIT_MB"))
  if mode == nil or mode == "off" or mode == "check" or limit == nil then return nil end
  local gpu = xmem.partition_gpu(policy, options.partition)
  if mode == "budget" and limit > gpu.memory_mb then limit = gpu.memory_mb end
  local r = xmem.share(policy, options.partition, limit, options.account)
  if r.gres == nil then
    slurm.log_info("xmem: %s", r.why)
    return nil
  end
  -- The same check as job_submit.lua's: srun's own step must ask for what the job gets.
  local unsafe = xmem.enforcement_shortfall(policy, gpu, r.partition)
  if unsafe then
    slurm.log_info("xmem: %s", unsafe)
    return nil
  end
  slurm.log_info("xmem: requesting %s instead of one whole GPU (%s)", r.gres, r.why)
  return r.gres
end

local function xmem_pre_submit(options)
  if not ok_lib then return slurm.SUCCESS end
  local jobid = os.getenv("SLURM_JOB_ID")
  if options.type == "srun" and jobid and jobid ~= "" then
    if one_gpu(options, true) then
      local share = job_share(jobid)
      if share then
        options.gres = share
      end
    end
    return slurm.SUCCESS
  end
  local policy = xmem.load_policy(DIR)
  if policy == nil or not one_gpu(options, options.type == "srun") then return slurm.SUCCESS end
  local share = sized_share(policy, options)
  -- srun's own step asks for what the controller makes of the allocation: the share, or,
  -- for a GPU kept whole where the site packs, every share of one GPU (job_submit.lua).
  share = share or xmem.kept_whole_share(policy, options.partition)
  if share and options.type == "srun" then options.gres = share end
  return slurm.SUCCESS
end

-- Advisory only: an error here must never stop a submission.
function slurm_cli_pre_submit(options, pack_offset)
  local ok, err = pcall(xmem_pre_submit, options)
  if not ok then slurm.log_info("xmem: cli_filter: %s (ignored)", tostring(err)) end
  return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
  return slurm.SUCCESS
end
