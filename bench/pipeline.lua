-- wrk script: HTTP/1.1 pipelining. Each write carries DEPTH copies of the request (default 16,
-- override with `wrk ... -s bench/pipeline.lua <url> -- <depth>`); wrk counts every response.
local depth = 16

init = function(args)
  depth = tonumber(args[1]) or depth
  local r = {}
  for i = 1, depth do
    r[i] = wrk.format(nil, nil)
  end
  req = table.concat(r)
end

request = function()
  return req
end
