-- Append one entry to a match log, atomically and at most once.
-- KEYS[1] log stream, KEYS[2] head, KEYS[3] command ids, KEYS[4] seat tokens
-- ARGV[1] expected head ("" for a new match), ARGV[2] new head, ARGV[3] command key,
-- ARGV[4] entry JSON, ARGV[5] seq, ARGV[6] token hash ("" for none), ARGV[7] seat
local seen = redis.call('HGET', KEYS[3], ARGV[3])
if seen then
  return {'dup', seen}
end
local head = redis.call('GET', KEYS[2])
if not head then
  head = ''
end
if head ~= ARGV[1] then
  return {'conflict', head}
end
local id = redis.call('XADD', KEYS[1], '*', 'e', ARGV[4])
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
if ARGV[6] ~= '' then
  redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
end
return {'ok', id}
