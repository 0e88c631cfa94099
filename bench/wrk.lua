-- The benchmark's one wrk script (bench/bench.py passes it to every wrk run). Arguments after
-- `--`, each KEY=VALUE:
--   depth=N             pipelining: each write carries N copies of the request (default 1)
--   method=M            request method (default GET)
--   body=@FILE          request body, read from FILE
--   header=NAME:VALUE   an extra request header (repeatable)
--   req=METHOD PATH [@FILE]  a request to rotate through (repeatable; the soak's mixed load);
--                       its body, if any, is sent as application/octet-stream, or JSON when FILE
--                       ends in .json
-- A plain request (depth 1, no req=) stays wrk's static request: no Lua runs per request.
-- done() prints one line `BENCH_WRK {json}`: latency percentiles in microseconds, including the
-- p99.9 and p99.99 that wrk's --latency table lacks, and the error counts by kind.

local depth, reqs = 1, {}

local function read_file(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("*a")
  f:close()
  return data
end

init = function(args)
  local headers = {}
  for _, a in ipairs(args) do
    local k, v = a:match("^([%w_]+)=(.*)$")
    if k == "depth" then
      depth = tonumber(v)
    elseif k == "method" then
      wrk.method = v
    elseif k == "body" then
      wrk.body = read_file(v:sub(2))
    elseif k == "header" then
      local name, value = v:match("^([^:]+):%s*(.*)$")
      headers[name] = value
    elseif k == "req" then
      local method, path, file = v:match("^(%S+)%s+(%S+)%s*@?(%S*)$")
      local h, body = {}, nil
      if file ~= "" then
        body = read_file(file)
        h["Content-Type"] = file:match("%.json$") and "application/json" or "application/octet-stream"
      end
      reqs[#reqs + 1] = wrk.format(method, path, h, body)
    end
  end
  for name, value in pairs(headers) do
    wrk.headers[name] = value
  end
  if #reqs > 0 then
    local i = 0
    request = function()
      i = i % #reqs + 1
      return reqs[i]
    end
  elseif depth > 1 then
    local batch = string.rep(wrk.format(), depth)
    request = function()
      return batch
    end
  end
end

done = function(summary, latency, requests)
  local p = {}
  for _, q in ipairs({ 50, 75, 90, 99, 99.9, 99.99 }) do
    p[#p + 1] = string.format('"%s": %d', tostring(q), latency:percentile(q))
  end
  local e = summary.errors
  io.write(string.format(
    'BENCH_WRK {"percentiles_us": {%s}, "min_us": %d, "max_us": %d, "mean_us": %.1f, ' ..
    '"requests": %d, "duration_us": %d, "bytes": %d, "errors": {"connect": %d, "read": %d, ' ..
    '"write": %d, "status": %d, "timeout": %d}}\n',
    table.concat(p, ", "), latency.min, latency.max, latency.mean, summary.requests,
    summary.duration, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
end
