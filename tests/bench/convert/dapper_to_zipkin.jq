# SPDX-License-Identifier: Apache-2.0
# tests/bench/convert/dapper_to_zipkin.jq: the peer of `tracewire convert --from dapper
# --to zipkin-v2-json` in the conversion benchmark (run_convert_bench.sh, `make bench`;
# CONTRIBUTING.md, "Benchmark"). It maps one Dapper-style record
# (docs/dapper-log-format.md) to one Zipkin v2 span with the rules of
# sdk/wire/zipkin/zipkin_v2_json.h, key by key and in the same key order:
#
#   traceId   lower-case; a 32-digit id whose high half is zero is cut to 16
#   parentId  parent_id, absent for a root and when it equals the span id
#   id, name  (name absent when empty)
#   kind      the last span.kind tag (any case), else `kind`: CLIENT|SERVER|PRODUCER|CONSUMER;
#             a span.kind tag that maps is not repeated as a tag
#   timestamp start_us when > 0;  duration  end_us - start_us, at least 1
#   debug     true when flags has bit 2
#   localEndpoint  process service, process tag ip (ipv4, or ipv6 when it holds ':'),
#             process tag port
#   remoteEndpoint peer.service, peer.ipv4, peer.ipv6, peer.port (the last of each key);
#             when it has a field, these four tags are not repeated as tags
#   annotations one per log with fields: the event value alone, else with " k=v" for the
#             other fields ("k=v ..." without an event)
#   tags      process tags (but ip, ipv6 and port), then span tags, stringified (bool
#             true/false, numbers as text, binary as its base64); the last of a key wins;
#             a false error (false, 0, "false") is left out; a true one carries the
#             message field of the first error log, else "true"
#
# What it does not do, because a line-at-a-time jq program cannot: read other formats,
# detect time units, repair invalid UTF-8 (jq reads it as U+FFFD already), reject bad
# records with file:line, and assemble traces (merge parts, remove duplicates). The
# benchmark input needs none of these, so both sides do the same work on it.
#
# Run as: jq -n -r -f dapper_to_zipkin.jq FILE. It streams (`inputs` reads one record at a
# time, so memory stays flat) and writes one JSON array: "[", then one span per line with ","
# before all but the first, then "]". Measured against the alternatives on 20,000 records
# (jq 1.6): `jq -c` per record with sed adding "[", "," and "]" costs the same CPU (3.2-3.3 s
# both) but needs a pipeline; `jq -c -n '[inputs | span]'` holds every span in memory (GBs
# for a million). One table lookup pass builds the tags (a span tag replaces a process tag
# with the same key); a first version with with_entries and one pass per tag kind took 40%
# more CPU.


def text:
  if .type == "string" then .value
  elif .type == "bool" then (if .value then "true" else "false" end)
  else (.value | tostring) end;

def endpoint_of($service; $ip; $port):
  ( {}
    | if ($service // "") != "" then .serviceName = $service else . end
    | if $ip == null then .
      elif ($ip | contains(":")) then .ipv6 = $ip
      else .ipv4 = $ip end
    | if $port != null then ($port | tonumber) as $p
        | if $p > 0 and $p < 65536 then .port = $p else . end
      else . end );

def span:
  . as $r
  | (reduce ($r.process.tags // [])[] as $t ({}; .[$t.key] = $t)) as $pmap
  | (reduce ($r.tags // [])[] as $t ($pmap | del(.ip, .ipv6, .port); .[$t.key] = $t)) as $m
  | ({"client": "CLIENT", "server": "SERVER", "producer": "PRODUCER", "consumer": "CONSUMER"}
       [($m["span.kind"].value // $r.kind // "") | ascii_downcase]) as $kind
  | endpoint_of($m["peer.service"].value; ($m["peer.ipv4"] // $m["peer.ipv6"]).value;
                $m["peer.port"].value) as $remote
  | ($r.trace_id | ascii_downcase
     | if length == 32 and .[0:16] == "0000000000000000" then .[16:] else . end) as $trace_id
  | ($r.end_us - $r.start_us) as $duration
  | { traceId: $trace_id }
  | if ($r.parent_id // "") != "" and $r.parent_id != $r.span_id
    then .parentId = $r.parent_id else . end
  | .id = $r.span_id
  | if $kind != null then .kind = $kind else . end
  | if $r.name != "" then .name = $r.name else . end
  | if $r.start_us > 0 then .timestamp = $r.start_us else . end
  | .duration = (if $duration < 1 then 1 else $duration end)
  | if (($r.flags // 1) / 2 | floor) % 2 == 1 then .debug = true else . end
  | .localEndpoint = endpoint_of($r.process.service; $pmap.ip.value; $pmap.port.value)
  | if $remote != {} then .remoteEndpoint = $remote else . end
  | if $r.logs then
      ([ $r.logs[] | select(.fields != [])
         | { timestamp: .ts_us,
             value: ( if (.fields | length) == 1 and .fields[0].key == "event"
                      then .fields[0] | text
                      else ( (.fields | map(select(.key == "event")) | first) as $event
                             | [ (if $event != null then ($event | text) else empty end),
                                 (.fields[] | select(.key != "event") | "\(.key)=\(text)") ]
                             | join(" ") ) end ) } ]) as $a
      | if $a != [] then .annotations = $a else . end
    else . end
  | ( $m
      | if $kind != null then del(.["span.kind"]) else . end
      | if $remote != {} then del(.["peer.service"], .["peer.ipv4"], .["peer.ipv6"], .["peer.port"])
        else . end
      | .error as $e
      | map_values(text)
      | if $e == null then .
        elif ($e.type == "bool" and $e.value == false)
             or (($e.type == "int64" or $e.type == "float64") and ($e.value | tostring) == "0")
             or ($e.type == "string" and ($e.value | ascii_downcase) == "false")
        then del(.error)
        elif $e.type == "string" and ($e.value | ascii_downcase) != "true" then .
        else .error = ( [ ($r.logs // [])[] | .fields as $f
                          | select(any($f[]; .key == "event" and .value == "error"))
                          | $f[] | select(.key == "message" and .type == "string") | .value ]
                        | first // "true" )
        end ) as $tags
  | if $tags != {} then .tags = $tags else . end;

"[",
(foreach inputs as $record (0; . + 1;
   (if . == 1 then "" else "," end) + ($record | span | tojson))),
"]"
