-- wrk script: POSTs JSON bodies read from files, in turn, to one path.
--   wrk -t2 -c2 -d10s --latency -s post_bodies.lua http://127.0.0.1:PORT -- /filter a.json b.json
-- Each thread cycles through the bodies; done() prints how many answers were not HTTP 200.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

local requests = {}
local next_index = 0
errors = 0

function init(args)
  local path = args[1]
  if path == nil or #args < 2 then
    error("usage: -- PATH BODY.json [BODY.json ...]")
  end
  for k = 2, #args do
    local f = assert(io.open(args[k], "rb"))
    local body = f:read("*a")
    f:close()
    table.insert(requests, wrk.format("POST", path, { ["Content-Type"] = "application/json" }, body))
  end
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end

function response(status, headers, body)
  if status ~= 200 then
    errors = errors + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  for _, t in ipairs(threads) do
    total = total + (t:get("errors") or 0)
  end
  io.write(string.format("non-200 answers: %d\n", total))
end
