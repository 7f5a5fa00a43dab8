-- test_enforce.lua — xmem_lib.lua's enforcement_shortfall, the required-level check that
-- job_submit.lua and cli_filter.lua share (docs/enforcement.md).
-- Run: lua5.1 test_enforce.lua ETC_DIR
local xmem = dofile(arg[1] .. "/xmem_lib.lua")
local t = dofile((arg[0]:match("^(.*)/") or ".") .. "/lua_check.lua")
local check = t.check

local LEVELS = { "none", "client", "mps-server", "dmem" }
local function policy(required)
  return { enforcement_levels = LEVELS, require_enforcement = required }
end
local client, dmem, mps = { enforcement = "client" }, { enforcement = "dmem" }, { enforcement = "mps-server" }

check(xmem.enforcement_shortfall(policy("none"), client, "p") == nil, "nothing required")
check(xmem.enforcement_shortfall(policy("client"), client, "p") == nil, "client meets client")
check(xmem.enforcement_shortfall(policy("mps-server"), dmem, "p") == nil, "dmem meets mps-server")
check(xmem.enforcement_shortfall(policy("dmem"), dmem, "p") == nil, "dmem meets dmem")
local why = xmem.enforcement_shortfall(policy("dmem"), mps, "a100")
check(why ~= nil and why:find("partition a100 holds a GPU share only at enforcement level mps-server, "
  .. "the site requires dmem: the job keeps its whole GPU", 1, true) ~= nil, "below: " .. tostring(why))
-- A target without a declared level is client, the floor every node offers.
check(xmem.enforcement_shortfall(policy("mps-server"), {}, "p") ~= nil, "undeclared is client")
check(xmem.enforcement_shortfall(policy("client"), {}, "p") == nil, "undeclared meets client")
-- A policy rendered before the levels existed requires nothing.
check(xmem.enforcement_shortfall({}, client, "p") == nil, "old policy")
-- A name outside the list keeps the job whole rather than guess.
why = xmem.enforcement_shortfall(policy("hard"), dmem, "p")
check(why ~= nil and why:find("malformed", 1, true) ~= nil, "unknown required level: " .. tostring(why))
why = xmem.enforcement_shortfall({ require_enforcement = "dmem" }, dmem, "p")
check(why ~= nil and why:find("malformed", 1, true) ~= nil, "required level without the list: " .. tostring(why))

t.finish("test_enforce.lua")
