-- lua_check.lua — the checks the Lua unit tests share. check(cond, what) and
-- eq(got, want, what) write one "FAIL ..." line on stderr each; finish(name) exits 1 after any
-- failure, else prints that the file's checks all passed.
-- Use: local t = dofile((arg[0]:match("^(.*)/") or ".") .. "/lua_check.lua")
local t = { failures = 0 }

function t.check(cond, what)
  if not cond then
    t.failures = t.failures + 1
    io.stderr:write("FAIL " .. what .. "\n")
  end
end

function t.eq(got, want, what)
  if got ~= want then
    t.failures = t.failures + 1
    io.stderr:write(string.format("FAIL %s: got %s, want %s\n", what, tostring(got), tostring(want)))
  end
end

function t.finish(name)
  if t.failures > 0 then os.exit(1) end
  print(name .. ": all checks passed")
end

return t
