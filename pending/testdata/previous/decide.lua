-- decideScript of the previous release (e481560), for the mixed-fleet test

local function audit_rfc3339(us)
  local n = tonumber(us) or 0
  local secs = math.floor(n / 1000000)
  local frac = n - secs * 1000000
  local days = math.floor(secs / 86400)
  local sod = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local d = doy - math.floor((153 * mp + 2) / 5) + 1
  local m = mp < 10 and mp + 3 or mp - 9
  local y = yoe + era * 400
  if m <= 2 then y = y + 1 end
  local s = string.format('%04d-%02d-%02dT%02d:%02d:%02d', y, m, d,
    math.floor(sod / 3600), math.floor((sod % 3600) / 60), sod % 60)
  if frac > 0 then
    s = s .. (string.gsub('.' .. string.format('%06d', frac), '0+$', ''))
  end
  return s .. 'Z'
end
local function audit_field(v)
  return #v .. ':' .. v .. '\n'
end
local function audit_append(audit, head, maxlen, at, kind, ask_id, run_id, tool, outcome, by, reason, detail)
  local h = redis.call('HMGET', head, 'seq', 'hash')
  local seq = string.format('%.0f', (tonumber(h[1]) or 0) + 1)
  local prev = h[2] or ''
  local canon = 'askops-audit/1\n' .. audit_field(seq) .. audit_field(prev) ..
    audit_field(kind) .. audit_field(ask_id) .. audit_field(run_id) .. audit_field(tool) ..
    audit_field(outcome) .. audit_field(by) .. audit_field(reason) .. audit_field(detail) ..
    audit_field(audit_rfc3339(at))
  local id = redis.call('XADD', audit, 'MAXLEN', '~', maxlen, '*',
    'seq', seq, 'prev', prev, 'kind', kind, 'ask_id', ask_id, 'run_id', run_id, 'tool', tool,
    'outcome', outcome, 'by', by, 'reason', reason, 'detail', detail, 'at', at)
  redis.call('HSET', head, 'seq', seq, 'hash', redis.sha1hex(canon), 'id', id)
  return id
end

local function announce(channel, id, record)
  if channel == '' then return end
  local parts = {id, '\n'}
  for i = 1, #record do parts[#parts + 1] = #record[i] .. ':' .. record[i] end
  redis.call('PUBLISH', channel, table.concat(parts))
  redis.call('PUBLISH', channel, id)
end

local function server_now(now)
  if now ~= '' then return now end
  local t = redis.call('TIME')
  return t[1] .. string.format('%06d', tonumber(t[2]))
end
local function already_over(key, deadlines, id)
  local status = redis.call('HGET', key, 'status')
  if status == 'pending' then return nil end
  redis.call('ZREM', deadlines, id)
  if not status then return {'missing'} end
  return {'lost', redis.call('HGETALL', key)}
end

local key, deadlines, audit, head = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local id, outcome, by, reason, now, channel, maxlen = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
now = server_now(now)
local over = already_over(key, deadlines, id)
if over then return over end
local deadline = tonumber(redis.call('HGET', key, 'deadline'))
if outcome == 'expired' and tonumber(now) < deadline then
  return {'early', string.format('%.0f', deadline - tonumber(now))}
end
local result = 'won'
if (outcome == 'approved' or outcome == 'approved_session' or outcome == 'denied')
   and tonumber(now) >= deadline then
  outcome, by, reason, result = 'expired', '', ARGV[8], 'late'
elseif outcome == 'expired' and by == '' then
  reason = redis.call('HGET', key, 'expiry') or reason -- what the follow-ups tried (schedule.go)
end
redis.call('HSET', key, 'status', outcome, 'decided_by', by, 'decided_at', now, 'decision_reason', reason)
redis.call('ZREM', deadlines, id)
local rec = redis.call('HMGET', key, 'run_id', 'tool')
audit_append(audit, head, maxlen, now, 'decided', id, rec[1] or '', rec[2] or '', outcome, by, reason, '')
local record = redis.call('HGETALL', key)
announce(channel, id, record)
return {result, record}
