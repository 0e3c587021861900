// tlsnb-bun: the Node adapter (clients/node/tlsnb_node.js) under Bun, unchanged, with Bun's own heap counters
// added to its summary line. Bun's allocator is mimalloc, linked in under its own names (the binary imports no
// malloc), so the LD_PRELOAD heap shim sees none of it; the leak gate judges this client's heap plateau from
// heap_live_objects instead (leaks/leaks_gate.py runtime_heap, as Go's MemStats).
'use strict';
const { heapStats } = require('bun:jsc');

// The JavaScript objects an attempt makes and must let go: its sockets, their handlers, contexts and buffers. A
// connection kept alive keeps its TLSSocket and TCPSocket, so one kept per attempt puts the count (LONG - SHORT)
// apart; after the attempts it is 7 to 9 whatever the count. JavaScriptCore's whole object count is shown, not
// judged: its collector scans the stack conservatively, and the total moves by thousands between runs of any
// count (15,657 and 21,509 after 8,000 attempts, 16,443 after 2,000), as do its pooled Timeouts (90 to 204).
const ATTEMPT_TYPES = ['TLSSocket', 'TCPSocket', 'SocketHandlers', 'SecureContext', 'Buffer', 'ArrayBuffer'];

// What is live after full collections: the attempts' objects (heap_live_objects, judged by the leak gate), the
// whole heap and mimalloc's blocks (shown: they climb to a plateau between 200 and 2,000 attempts and stay
// there, 53,000 then 72,000 then 69,000 after 8,000: the runtime's caches, README.md).
function runtimeHeap() {
  for (let i = 0; i < 4; i++) Bun.gc(true);  // one leaves the objects a finalizer freed to the next
  const s = heapStats();
  const mi = s.mimalloc;
  const types = s.objectTypeCounts;
  return {
    heap_live_objects: ATTEMPT_TYPES.reduce((n, t) => n + (types[t] || 0), 0),
    heap_live_bytes: s.heapSize + s.extraMemorySize,
    heap_js_objects: s.objectCount,
    heap_native_blocks: mi.malloc_bins.reduce((n, bin) => n + bin.current, 0),
    heap_native_bytes: mi.malloc_normal.current + mi.malloc_huge.current,
  };
}

// The adapter writes its summary as one JSON line, last: the line is held until the loop has nothing left to
// run ('beforeExit': every socket closed, every timer done), so what is counted is what the attempts left.
const write = process.stdout.write.bind(process.stdout);
let summary = null;
process.stdout.write = (chunk, ...rest) => {
  if (typeof chunk !== 'string' || !chunk.startsWith('{"type":"summary"')) return write(chunk, ...rest);
  summary = JSON.parse(chunk);
  return true;
};
process.once('beforeExit', () => {
  if (summary) write(JSON.stringify({ ...summary, ...runtimeHeap() }) + '\n');
});
require('../node/tlsnb_node.js');
