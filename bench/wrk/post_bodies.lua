-- wrk script: POSTs JSON bodies read from files, in turn, to one path.
--   wrk -t2 -c2 -d10s --latency -s post_bodies.lua http://127.0.0.1:PORT -- /filter a.json b.json
-- Each thread cycles through the bodies; done() prints how many answers had an HTTP error
-- status (wrk counts status >= 400 itself). There is no response() function on purpose:
-- with one, wrk copies every answer's headers and body into Lua (~200 KB per 5000-node
-- answer), which doubled wrk's CPU time on the two cores it shares with the server.

local requests = {}
local next_index = 0

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

function done(summary, latency, requests)
  io.write(string.format("http errors: %d\n", summary.errors.status))
end
