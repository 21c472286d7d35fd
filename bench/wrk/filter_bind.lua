-- wrk script: the filter -> bind cycle of kube-scheduler, one pod after the other. Each pod
-- gets a unique UID; filter offers it CANDIDATES nodes (a sliding window over the node names),
-- and bind sends it to the first node the filter answer lists. Run with one connection per
-- thread (-c equal to -t) so that each bind follows its own filter.
--   wrk -t2 -c2 -d10s --latency -s filter_bind.lua URL -- names.txt bind-pod.json [CANDIDATES]
-- done() prints the binds sent, binds answered with an error (and the last error), and filters
-- where nothing fit.
local threads = {}
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local names = {}
local template
local candidates = 8
local pos = 1
local state = "filter"
local uid, node
local n = 0
local headers = { ["Content-Type"] = "application/json" }
binds, bind_errors, unfit = 0, 0, 0
last_error = ""

function init(args)
  if #args < 2 then
    error("usage: -- NAMES.txt POD.json [CANDIDATES]")
  end
  for line in io.lines(args[1]) do
    if #line > 0 then table.insert(names, line) end
  end
  local f = assert(io.open(args[2], "rb"))
  template = f:read("*a")
  f:close()
  candidates = tonumber(args[3] or "8")
  pos = ((id or 0) * 7919) % #names + 1
end

function request()
  if state == "filter" then
    n = n + 1
    uid = string.format("load-%d-%d", id or 0, n)
    local list = {}
    for k = 0, candidates - 1 do
      list[#list + 1] = '"' .. names[(pos + k - 1) % #names + 1] .. '"'
    end
    pos = (pos + candidates - 1) % #names + 1
    local pod = template:gsub("__UID__", uid)
    local body = '{"Pod":' .. pod .. ',"Nodes":null,"NodeNames":[' .. table.concat(list, ",") .. ']}'
    return wrk.format("POST", "/filter", headers, body)
  end
  local body = string.format('{"PodName":"bind-%s","PodNamespace":"openb","PodUID":"%s","Node":"%s"}',
    uid, uid, node)
  return wrk.format("POST", "/bind", headers, body)
end

function response(status, headers, body)
  if state == "filter" then
    node = body:match('"NodeNames":%["([^"]+)"')
    if node then
      state = "bind"
    else
      unfit = unfit + 1
    end
    return
  end
  binds = binds + 1
  if status ~= 200 or body ~= '{"Error":""}' then
    bind_errors = bind_errors + 1
    last_error = body
  end
  state = "filter"
end

function done(summary, latency, requests)
  local b, e, u, last = 0, 0, 0, ""
  for _, t in ipairs(threads) do
    b = b + (t:get("binds") or 0)
    e = e + (t:get("bind_errors") or 0)
    u = u + (t:get("unfit") or 0)
    if (t:get("last_error") or "") ~= "" then last = t:get("last_error") end
  end
  io.write(string.format("binds: %d, bind errors: %d, filters with no fit: %d\n", b, e, u))
  if last ~= "" then io.write("last bind error: " .. last .. "\n") end
end
