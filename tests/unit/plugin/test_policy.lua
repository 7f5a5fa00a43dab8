-- test_policy.lua — xmem_lib.lua, the policy arithmetic job_submit.lua and cli_filter.lua
-- share: request parsing, share sizes, the whole-GPU threshold, the cap, policy validation.
-- Run: lua5.1 test_policy.lua ETC_DIR SCRATCH_DIR
local etc, scratch = arg[1], arg[2]
local xmem = dofile(etc .. "/xmem_lib.lua")
local t = dofile((arg[0]:match("^(.*)/") or ".") .. "/lua_check.lua")
local eq = t.eq

local function policy(over)
  local p = { version = 1, mode = "shard", margin_percent = 10, whole_gpu_above_percent = 90, daemon_uid = 0,
    default = { gpu = "A100-40GB", memory_mb = 40960, shards_per_gpu = 10, mps_per_gpu = 100 },
    partitions = { small = { gpu = "T4", memory_mb = 16384, shards_per_gpu = 4, mps_per_gpu = 100 } } }
  for k, v in pairs(over or {}) do p[k] = v end
  return p
end

-- Request parsing.
local n, shared = xmem.gpus_in("gres:gpu:1"); eq(n, 1, "gres:gpu:1"); eq(shared, false, "gres:gpu:1 shared")
eq((xmem.gpus_in("gres:gpu:a100:2")), 2, "typed count")
eq((xmem.gpus_in("gres/gpu")), 1, "bare gpu")
eq((xmem.gpus_in("gres:gpu:1,gres:gpu:1")), 2, "two items")
n, shared = xmem.gpus_in("gres:shard:3"); eq(n, 0, "shard count"); eq(shared, true, "shard is shared")
-- Issue 26, L6: a request is written into root's record parsed, never copied.
eq(xmem.request_text({ "gres:gpu:1", "", "" }), "gres:gpu:1", "request text")
eq(xmem.request_text({ "gres/gpu:a100:2", "gpu", "" }), "gres:gpu:a100:2 gres:gpu", "typed request text")
eq(xmem.request_text({ "gres:gpu:1; xmem: requeued after CUDA OOM from=shard:3 limit=8000M to=shard:10 whole", "", "" }),
  "?", "a forged mark in the GRES string")
eq(xmem.request_text({ "gres:gpu:1,gres:x=y", "", "" }), "gres:gpu:1 ?", "an item that does not parse")
eq((xmem.gpus_in(nil)), 0, "nil")
eq((xmem.gpus_in("gres:nic:1")), 0, "other gres")

-- The GPU type and the canonical request a decision is bound to.
eq(xmem.gpu_type("gres:gpu:a100:1"), "a100", "typed"); eq(xmem.gpu_type("gres/gpu:a100"), "a100", "type, no count")
eq(xmem.gpu_type("gres:gpu:1"), nil, "untyped"); eq(xmem.gpu_type("gres:gpu"), nil, "bare"); eq(xmem.gpu_type(nil), nil, "nil type")
-- The request's shape and its canonical text, as the plugin's xmem_job_shape_text writes it
-- (tests/unit/script/test_shape.c has the same requests).
local NO_VAL = 4294967294
local function shape(job) return xmem.request_shape(job) end
eq(shape({ tres_per_node = "gres:gpu:1" }).text, "gpu:1", "canonical untyped")
eq(shape({ tres_per_job = "gres:gpu:a100:1", min_nodes = NO_VAL, num_tasks = NO_VAL }).text, "gpu:a100:1",
  "canonical typed, per job")
eq(shape({ tres_per_node = "gres:gpu:2" }).text, "gpu:2", "two GPUs on one node")
eq(shape({ tres_per_task = "gres:gpu:1", num_tasks = 1, ntasks_per_node = 65534, min_nodes = NO_VAL }).text, "gpu:1",
  "ntasks_per_node unset (NO_VAL16)")
eq(shape({ tres_per_node = "gres:gpu:1", min_nodes = 2 }).text, "gpu:1:nodes:2", "one GPU on each of 2 nodes")
eq(shape({ tres_per_node = "gres:gpu:4", min_nodes = 2 }).text, "gpu:4:nodes:2", "gpus-per-node 4 on 2 nodes")
eq(shape({ tres_per_task = "gres:gpu:1", min_nodes = 2, ntasks_per_node = 2, num_tasks = 4 }).text, "gpu:2:nodes:2",
  "per task times tasks per node")
eq(shape({ tres_per_task = "gres:gpu:1", num_tasks = 4 }).text, "gpu:4", "per task, -n 4")
eq(shape({ tres_per_task = "gres:gpu:1", num_tasks = 4, min_nodes = 2 }).text, "gpu:2:nodes:2", "-n 4 over 2 nodes")
eq(shape({ tres_per_job = "gres:gpu:2", min_nodes = 2 }).text, "gpu:1:nodes:2", "--gpus over the nodes")
-- srun outside a job: cli_filter.lua asked for the share in place of gpu:1, which the plugin signed.
local sh = shape({ tres_per_node = "gres:shard:3" })
eq(sh.shared, true, "a share is shared"); eq(sh.gpus_per_node, 0, "a share counts no GPU"); eq(sh.text, "gpu:1", "as signed")
-- What 22.05 can hold as shares: one GPU per node, not several on one node.
eq(xmem.multi_gpu_why(shape({ tres_per_node = "gres:gpu:1", min_nodes = 2 })), nil, "one GPU per node packs")
local mwhy = xmem.multi_gpu_why(shape({ tres_per_node = "gres:gpu:2" }))
eq(mwhy and mwhy:find("2 GPUs on one node stay whole", 1, true), 1, "several GPUs on one node stay whole")
eq(mwhy and mwhy:find("MULTIPLE_SHARING_GRES_PJ", 1, true) ~= nil, true, "and what would change it")
-- More ranks than GPUs (srun -n 4 on 2 GPUs): several would share one GPU's share.
local two = shape({ tres_per_node = "gres:gpu:1", min_nodes = 2 })
eq(xmem.ranks_why(2, two), nil, "2 ranks on 2 GPUs"); eq(xmem.ranks_why(1, two), nil, "fewer ranks")
local rwhy = xmem.ranks_why(4, two)
eq(rwhy and rwhy:find("the job runs 4 ranks on 2 GPUs", 1, true), 1, "4 ranks on 2 GPUs stay whole")
eq(xmem.ranks_why(2, shape({ tres_per_node = "gres:shard:1", min_nodes = 2 })), nil, "srun's share per node: a GPU each")
-- A held job's mark names its request in the canonical text; read back.
for _, text in ipairs({ "gpu:1", "gpu:2", "gpu:1:nodes:2", "gpu:a100:4:nodes:8" }) do
  local back = xmem.shape_of_text(text)
  eq(back and shape({ tres_per_node = "gres:" .. text:gsub(":nodes:%d+$", ""),
    min_nodes = tonumber(text:match(":nodes:(%d+)$") or "1") }).text, text, "mark text " .. text)
end
eq(xmem.shape_of_text("gpu:"), nil, "no count"); eq(xmem.shape_of_text("shard:3"), nil, "not a GPU request")

-- Decision payloads: every key known, each once (a smuggled "uid=" cannot override).
local S = string.rep("a", 64)
local bad, why
local D = string.rep("b", 64)
local E = " envnames=PATH:VIRTUAL_ENV env=" .. string.rep("c", 64)
local d = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=" .. S .. " dir=" .. D .. " gres=gpu:1" .. E .. " expires=9")
eq(d and d.uid, 5, "payload uid"); eq(d and d.script, S, "payload script"); eq(d and d.gres, "gpu:1", "payload gres")
eq(d and d.dir, D, "payload dir"); eq(d and d.envnames, "PATH:VIRTUAL_ENV", "payload envnames")
eq(d and d.ranks, 1, "payload without ranks: one")
local dr = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=" .. S .. " dir=" .. D
  .. " gres=gpu:1:nodes:2" .. E .. " expires=9 ranks=4")
eq(dr and dr.ranks, 4, "payload ranks"); eq(dr and dr.gres, "gpu:1:nodes:2", "payload gres of 2 nodes")
eq(xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=" .. S .. " dir=" .. D
  .. " gres=gpu:1" .. E .. " expires=9 ranks=1e3"), nil, "malformed ranks refused")
-- Bound to the environment: a decision without it, or with a name list that is not names, is refused.
local noenv, ewhy = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=- dir=" .. D .. " gres=- expires=9")
eq(noenv, nil, "decision without env refused"); eq(ewhy and ewhy:find("incomplete decision", 1, true), 1, "no-env message")
eq(xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=- dir=" .. D .. " gres=- envnames=PATH.x env=- expires=9"), nil, "odd envnames refused")
-- Bound to the working directory: a decision from an xmemd that does not sign one is refused.
local nodir, nwhy = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=" .. S .. " gres=gpu:1" .. E .. " expires=9")
eq(nodir, nil, "decision without dir refused"); eq(nwhy and nwhy:find("incomplete decision", 1, true), 1, "no-dir message")
bad, why = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 script=- dir=" .. D .. " dir=" .. S .. " gres=- expires=9")
eq(bad, nil, "repeated dir refused"); eq(why, "decision field 'dir' given twice", "repeated dir message")
bad, why = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 uid=0 limit=1 script=- gres=- expires=9")
eq(bad, nil, "repeated key refused"); eq(why, "decision field 'uid' given twice", "repeated key message")
bad, why = xmem.parse_decision("xmem-decision v1 uid=5 limit=2 evil=1 script=- gres=- expires=9")
eq(bad, nil, "unknown key refused"); eq(why, "unknown decision field 'evil'", "unknown key message")
bad, why = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=2 gpu=A100 expires=9")
eq(bad, nil, "unbound decision refused"); eq(why:find("incomplete decision", 1, true), 1, "unbound message")
-- Numbers: one rule with the plugin's xmem_decimal_parse (docs/enforcement.md "Numbers"):
-- plain decimal digits, 1 to 15 of them, at most max; what tonumber() also reads is refused.
eq(xmem.decimal("4096", 16777216), 4096, "decimal")
eq(xmem.decimal("0", 10), 0, "zero"); eq(xmem.decimal("007", 10), 7, "leading zeros")
eq(xmem.decimal("999999999999999", 1e15), 999999999999999, "15 digits")
eq(xmem.decimal("16777217", 16777216), nil, "above max")
for _, s in ipairs({ "", "1e3", "0x400", "1000.5", "-1", "+1", " 1", "1 ", "1\n", "1M", "\239\188\145",
  "1_000", "0X1", ".5", "1.", "inf", "nan", "9999999999999999", "1e+3", "1,000", "\t7" }) do
  eq(xmem.decimal(s, 1e15), nil, "decimal('" .. s .. "')")
end
eq(xmem.decimal(nil, 10), nil, "nil"); eq(xmem.decimal(12, 100), nil, "a Lua number is no text")
-- A decision's numbers follow it too (the payload is signed, the rule is still one).
bad = xmem.parse_decision("xmem-decision v1 uid=5 request=7 peak=1 limit=1e3 gpu=A100 script=" .. S .. " dir=" .. D .. " gres=gpu:1" .. E .. " expires=9")
eq(bad, nil, "decision limit 1e3 refused")
bad = xmem.parse_decision("xmem-decision v1 uid=0x5 request=7 peak=1 limit=2 gpu=A100 script=" .. S .. " dir=" .. D .. " gres=gpu:1" .. E .. " expires=9")
eq(bad, nil, "decision uid 0x5 refused")

-- Shard sizing: a limit of 12288 MiB + 10% = a share size of 13517 → 4 shards of 4096.
local r = xmem.share(policy(), nil, 12288)
eq(r.gres, "shard:4", "12 GiB"); eq(r.share_mb, 13517, "share size"); eq(r.limit_mb, 12288, "limit")
-- Issue 35: the line a user reads names the limit and the share size, each by its own name.
eq(r.why, "limit 12288 MiB + 10% margin = share size 13517 MiB of the A100-40GB's 40960 MiB: shard:4", "why")
eq(xmem.share(policy(), nil, 100).gres, "shard:1", "tiny job gets one shard")
eq(xmem.share(policy({ margin_percent = 0 }), nil, 4096).gres, "shard:1", "exact fit")
eq(xmem.share(policy({ margin_percent = 0 }), nil, 4097).gres, "shard:2", "one MiB over")
-- Above 90% of the GPU: whole GPU.
r = xmem.share(policy(), nil, 34000)
eq(r.gres, nil, "too big has no share"); eq(r.too_big, true, "too big flagged"); eq(r.kind, "whole", "kind whole")
-- The cap: a site allowing 150% still gets at most one GPU's shards.
eq(xmem.share(policy({ whole_gpu_above_percent = 150 }), nil, 40960).gres, "shard:10", "cap")
-- Partition GPU: 4 shards of 4096 on a 16 GiB T4.
eq(xmem.share(policy(), "small", 5000).gres, "shard:2", "partition gpu")
eq(xmem.share(policy(), "other,small", 5000).gres, "shard:2", "first known partition of a list")
eq(xmem.share(policy(), "unknown", 5000).gres, "shard:2", "default gpu for unknown partition")
-- mps: percentage of the GPU, rounded up.
eq(xmem.share(policy({ mode = "mps" }), nil, 12288).gres, "mps:34", "mps 12 GiB")
eq(xmem.share(policy({ mode = "mps" }), nil, 16384).gres, "mps:45", "mps 16 GiB")
-- whole: never a share.
eq(xmem.share(policy({ mode = "whole" }), nil, 1000).gres, nil, "whole policy")
-- Calibrated margins (xmem calibrate): the GPU type's, an account's own, else margin_percent.
local cal = policy({ margins = { ["A100-40GB"] = { percent = 50, accounts = { physics = 0 } } } })
r = xmem.share(cal, nil, 8000)
eq(r.margin, 50, "GPU type margin"); eq(r.share_mb, 12000, "GPU type margin share size"); eq(r.gres, "shard:3", "GPU margin share")
r = xmem.share(cal, nil, 8000, "physics")
eq(r.margin, 0, "account margin"); eq(r.share_mb, 8000, "account margin share size"); eq(r.gres, "shard:2", "account share")
eq(xmem.share(cal, nil, 8000, "chemistry").margin, 50, "another account: the GPU type's")
eq(xmem.share(cal, "small", 8000).margin, 10, "a GPU without a calibrated margin: margin_percent")
eq(xmem.share(policy({ margins = {} }), nil, 8000).margin, 10, "empty margins")
eq(xmem.share(cal, nil, 8000).why:find("+ 50% margin", 1, true) ~= nil, true, "why names the margin")

-- Policy files: good, broken, wrong version, bad field.
local function write(name, text)
  local f = assert(io.open(scratch .. "/" .. name, "w")); f:write(text); f:close()
end
local good = [[return { version = 1, mode = "shard", margin_percent = 10, whole_gpu_above_percent = 90,
  daemon_uid = 0, default = { gpu = "A", memory_mb = 40960, shards_per_gpu = 10, mps_per_gpu = 100 } }]]
os.execute("mkdir -p " .. scratch .. "/ok " .. scratch .. "/broken " .. scratch .. "/v2 " .. scratch .. "/bad "
  .. scratch .. "/margins " .. scratch .. "/badmargin")
write("ok/xmem_policy.lua", good)
write("broken/xmem_policy.lua", "return {")
write("v2/xmem_policy.lua", (good:gsub("version = 1", "version = 2")))
write("bad/xmem_policy.lua", (good:gsub("shards_per_gpu = 10", "shards_per_gpu = 0")))
local err
local p = xmem.load_policy(scratch .. "/ok"); eq(type(p), "table", "good policy loads")
p, err = xmem.load_policy(scratch .. "/broken"); eq(p, nil, "broken policy")
eq(err ~= nil and err:find("cannot load", 1, true) ~= nil, true, "broken policy message: " .. tostring(err))
p, err = xmem.load_policy(scratch .. "/v2"); eq(p, nil, "version 2")
eq(err ~= nil and err:find("not a version 1", 1, true) ~= nil, true, "version message: " .. tostring(err))
p, err = xmem.load_policy(scratch .. "/bad"); eq(p, nil, "bad shards")
eq(err ~= nil and err:find("default.shards_per_gpu must be >= 1", 1, true) ~= nil, true, "field message: " .. tostring(err))
p = xmem.load_policy(scratch .. "/missing"); eq(p, nil, "missing policy")
write("margins/xmem_policy.lua", (good:gsub("} }$", "}, margins = { A = { percent = 12, accounts = { x = 3 } } } }")))
write("badmargin/xmem_policy.lua", (good:gsub("} }$", "}, margins = { A = { percent = -1 } } }")))
p, err = xmem.load_policy(scratch .. "/margins"); eq(type(p) == "table" and p.margins.A.percent, 12, "margins load: " .. tostring(err))
p, err = xmem.load_policy(scratch .. "/badmargin"); eq(p, nil, "negative margin")
eq(err ~= nil and err:find("margins.A.percent must be a number >= 0", 1, true) ~= nil, true, "margin message: " .. tostring(err))

t.finish("test_policy.lua")
