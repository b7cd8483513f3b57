-- wrk script: POST one JSON body per request, cycling through a file of bodies (one per line).
-- Each wrk thread starts at its own offset, so distinct bodies stay distinct across threads.
-- wrk itself reports "Non-2xx or 3xx responses" and socket errors.
local bodies = {}
local position = 0
local counter = 0

function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

function init(args)
  for line in io.lines(os.getenv("WRK_BODIES")) do
    bodies[#bodies + 1] = line
  end
  local share = math.floor(#bodies / tonumber(os.getenv("WRK_THREADS") or "1"))
  position = (id or 0) * share
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  position = position % #bodies + 1
  return wrk.format(nil, nil, nil, bodies[position])
end
