-- test_job_modify.lua — job_submit.lua's guards of xmem's records (docs/enforcement.md,
-- "Only root's words"): a non-root change of a packed job's GPU request is refused, root's
-- passes; an AdminComment set by a non-root submitter is dropped.
-- Run: lua5.1 test_job_modify.lua ETC_DIR
local t = dofile((arg[0]:match("^(.*)/") or ".") .. "/lua_check.lua")
local check = t.check

local user_lines = {}
slurm = {
  SUCCESS = 0, ERROR = -1, ESLURM_ACCESS_DENIED = 2002, NO_VAL = 4294967294,
  log_info = function() end,
  log_user = function(fmt, ...) user_lines[#user_lines + 1] = string.format(fmt, ...) end,
}
dofile(arg[1] .. "/job_submit.lua")

local RECORD = "xmem: estimate=7200M limit=8000M policy=shard request=gres:gpu:1->shard:3"
local packed = { job_id = 7, admin_comment = "x; " .. RECORD }

local function modify(desc, rec, uid)
  user_lines = {}
  return slurm_job_modify(desc, rec, {}, uid)
end

check(modify({ tres_per_node = "gres:shard:1" }, packed, 1001) == slurm.ESLURM_ACCESS_DENIED,
  "a user's share change of a packed job")
check(#user_lines == 1 and user_lines[1]:find("^xmem: job 7: .*scancel it and resubmit") ~= nil,
  "one line naming the fix: " .. tostring(user_lines[1]))
check(modify({ tres_per_job = "gres:gpu:1" }, packed, 1001) ~= slurm.SUCCESS, "per job")
check(modify({ tres_per_task = "gres:shard:1" }, packed, 1001) ~= slurm.SUCCESS, "per task")
check(modify({ tres_per_node = "gres:shard:10" }, packed, 0) == slurm.SUCCESS, "root's (the requeue's)")
check(modify({ time_limit = 10 }, packed, 1001) == slurm.SUCCESS, "another field")
check(modify({ tres_per_node = "gres:shard:1" }, { admin_comment = "xmem: policy=shard request=gres:gpu:2 (unchanged: multi)" }, 1001)
  == slurm.SUCCESS, "a job xmem left unchanged")
check(modify({ tres_per_node = "gres:shard:1" }, {}, 1001) == slurm.SUCCESS, "a job xmem never saw")
-- A forged record in the Comment is not the AdminComment.
check(modify({ tres_per_node = "gres:shard:1" }, { comment = RECORD }, 1001) == slurm.SUCCESS,
  "the Comment is not read")

local desc = { admin_comment = RECORD .. "; xmem: requeued after CUDA OOM from=shard:3 limit=8000M to=shard:10 whole" }
slurm_job_submit(desc, {}, 1001)
check(desc.admin_comment == "", "a user's AdminComment at submission: " .. tostring(desc.admin_comment))
desc = { admin_comment = "operator note" }
slurm_job_submit(desc, {}, 0)
check(desc.admin_comment == "operator note", "root's AdminComment at submission")

t.finish("test_job_modify.lua")
