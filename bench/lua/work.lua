-- work.lua — the Lua interpreter's workload of `make bench-lua` (bench/lua.sh): binary trees,
-- string building and matching, a table sort and closures, an interpreter's usual mix of
-- many small functions called very often.  Prints three checksums.
local function bottom_up(d)
  if d == 0 then return {} end
  d = d - 1
  return { bottom_up(d), bottom_up(d) }
end
local function check(t)
  if t[1] then return 1 + check(t[1]) + check(t[2]) end
  return 1
end
local n = 0
for d = 4, 14, 2 do
  for _ = 1, 2 ^ (14 - d) do n = n + check(bottom_up(d)) end
end
local parts = {}
for i = 1, 200000 do parts[#parts + 1] = string.format("%d:%s", i, tostring(i * 3)) end
local s = table.concat(parts, ",")
local words = {}
for w in s:gmatch("[^,]+") do words[#words + 1] = w end
table.sort(words)
local acc = 0
local function add(x) return function(y) return x + y end end
for i = 1, 300000 do acc = add(i)(acc) % 1000003 end
print(n, #words, acc)
