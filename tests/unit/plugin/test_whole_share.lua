-- test_whole_share.lua — where the site packs, a job that keeps one whole untyped GPU per
-- node is queued as every share of one GPU (job_submit.lua keep_whole_as_shares, and
-- cli_filter.lua for srun's own step): docs/enforcement.md, "Whole GPUs in a partition that
-- packs". Slurm 22.05 places a gpu:1 job beside share jobs; its share count does not.
-- Run: lua5.1 test_whole_share.lua ETC_DIR SCRATCH_DIR
local etc, scratch = arg[1], arg[2]
local t = dofile((arg[0]:match("^(.*)/") or ".") .. "/lua_check.lua")
local eq = t.eq

-- job_submit.lua reads its policy beside itself: copies in a scratch directory of their own.
local dir = scratch .. "/whole_share"
os.execute("mkdir -p " .. dir)
for _, name in ipairs({ "job_submit.lua", "cli_filter.lua", "xmem_lib.lua" }) do
  local src = assert(io.open(etc .. "/" .. name)):read("*a")
  local f = assert(io.open(dir .. "/" .. name, "w")); f:write(src); f:close()
end

-- The policy as xmemd renders it; default_extra and small_extra go into the two targets.
local function write_policy(mode, default_extra, small_extra)
  local f = assert(io.open(dir .. "/xmem_policy.lua", "w"))
  f:write(string.format([[return { version = 1, mode = %q, margin_percent = 10,
  whole_gpu_above_percent = 90, daemon_uid = 0,
  default = { gpu = "A100-40GB", memory_mb = 40960, shards_per_gpu = 10, mps_per_gpu = 100%s },
  partitions = { small = { gpu = "T4", memory_mb = 16384, shards_per_gpu = 4, mps_per_gpu = 50%s } } }
]], mode, default_extra or "", small_extra or ""))
  f:close()
end

slurm = { SUCCESS = 0, ERROR = -1, NO_VAL = 4294967294, log_info = function() end, log_user = function() end }
dofile(dir .. "/job_submit.lua")

-- A batch job as sbatch sends it: the fields given, a script, no --xmem.
local function submit(fields)
  local desc = { script = "#!/bin/sh\ntrue\n", work_dir = "/tmp", user_id = 1001 }
  for k, v in pairs(fields) do desc[k] = v end
  if desc.script == false then desc.script = nil end
  slurm_job_submit(desc, {}, 1001)
  return desc
end

write_policy("shard")
local d = submit({ tres_per_node = "gres:gpu:1" })
eq(d.tres_per_node, "gres:shard:10", "a plain gpu:1 batch job, shard policy")
eq(d.admin_comment, "xmem: whole GPU request=gres:gpu:1 queued as shard:10 (every share of one GPU:"
  .. " no packed job beside it)", "root's record says what it was and what it became")
eq(d.comment, d.admin_comment, "the user reads the same line")
d = submit({ tres_per_job = "gres:gpu:1" })
eq(d.tres_per_node, "gres:shard:10", "--gpus=1 batch job"); eq(d.tres_per_job, "", "--gpus=1 cleared")
d = submit({ tres_per_job = "gres:gpu:2", min_nodes = 2 })
eq(d.tres_per_node, "gres:shard:10", "one GPU on each of two nodes: every share on each")
d = submit({ tres_per_node = "gres:gpu:1", partition = "small" })
eq(d.tres_per_node, "gres:shard:4", "the partition's shards per GPU")
-- A typed GPU and several on one node cannot be shares in 22.05; a share stays as it is.
eq(submit({ tres_per_node = "gres:gpu:a100:1" }).tres_per_node, "gres:gpu:a100:1", "typed stays")
eq(submit({ tres_per_node = "gres:gpu:2" }).tres_per_node, "gres:gpu:2", "gpu:2 stays")
eq(submit({ tres_per_node = "gres:shard:3" }).tres_per_node, "gres:shard:3", "a share stays")
eq(submit({ tres_per_node = "" }).admin_comment, nil, "no GPU: nothing written")
-- No batch script: --gpus=1 stays (its steps ask --gpus, which cannot name a share);
-- --gres=gpu:1 becomes the share (cli_filter maps its steps).
eq(submit({ script = false, tres_per_job = "gres:gpu:1" }).tres_per_job, "gres:gpu:1", "salloc --gpus=1 stays")
eq(submit({ script = false, tres_per_node = "gres:gpu:1" }).tres_per_node, "gres:shard:10", "salloc --gres=gpu:1")
-- --xmem=check keeps the whole GPU: its record, then the share form.
d = submit({ tres_per_node = "gres:gpu:1", spank_job_env = { [0] = "XMEM_MODE=check" } })
eq(d.tres_per_node, "gres:shard:10", "--xmem without a decision: kept whole, as every share")

write_policy("mps")
eq(submit({ tres_per_node = "gres:gpu:1" }).tres_per_node, "gres:mps:100", "mps policy")
eq(submit({ tres_per_node = "gres:gpu:1", partition = "small" }).tres_per_node, "gres:mps:50", "mps per partition")
write_policy("whole")
eq(submit({ tres_per_node = "gres:gpu:1" }).tres_per_node, "gres:gpu:1", "policy whole: nothing packs")
-- Off for one partition (its nodes have no shares): that one keeps gpu:1, the others not.
write_policy("shard", nil, ", whole_as_shares = false")
d = submit({ tres_per_node = "gres:gpu:1", partition = "small" })
eq(d.tres_per_node, "gres:gpu:1", "whole_as_shares = false in the partition's target")
eq(d.admin_comment, nil, "and writes nothing")
eq(submit({ tres_per_node = "gres:gpu:1", partition = "other" }).tres_per_node, "gres:shard:10",
  "a partition the policy does not name: the default's")
write_policy("shard", ", whole_as_shares = false")
eq(submit({ tres_per_node = "gres:gpu:1" }).tres_per_node, "gres:gpu:1", "off in the default target")
write_policy("shard", ", whole_as_shares = 1")
eq(submit({ tres_per_node = "gres:gpu:1" }).tres_per_node, "gres:gpu:1", "a malformed policy changes nothing")

-- srun outside a job asks for its step what the controller will make of the allocation.
write_policy("shard")
dofile(dir .. "/cli_filter.lua")
local function srun(opts)
  opts.type = "srun"
  slurm_cli_pre_submit(opts, 0)
  return opts.gres
end
if (os.getenv("SLURM_JOB_ID") or "") == "" then
  eq(srun({ gres = "gres:gpu:1" }), "shard:10", "srun --gres=gpu:1 outside a job")
  eq(srun({ gres = "gres:gpu:1", partition = "small" }), "shard:4", "srun, the partition's")
  eq(srun({ gres = "gres:gpu:a100:1" }), "gres:gpu:a100:1", "srun typed stays")
  eq(srun({ gpus = "1" }), nil, "srun --gpus=1 stays (as job_submit.lua leaves it)")
end

t.finish("test_whole_share.lua")
