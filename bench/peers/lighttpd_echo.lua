-- POST /echo for lighttpd (mod_magnet): the request body back, with the request's Content-Type.
-- lighttpd 1.4.69's r.req_body.get returns the request head followed by the body, so the body
-- is the last r.req_body.len bytes of it.
local r = lighty.r
if r.req_attr["request.method"] ~= "POST" then
  return 405
end
if not r.req_body.collect then
  return 0 -- the body is still arriving: lighttpd runs this again when it is complete
end
local raw, n = r.req_body.get, r.req_body.len
r.resp_header["Content-Type"] = r.req_header["Content-Type"] or "application/octet-stream"
r.resp_body.set({ raw:sub(#raw - n + 1) })
return 200
