// tlsnb-bun: the Node adapter (clients/node/tlsnb_node.js) under Bun, unchanged, with Bun's own heap counters
// added to its summary line. Bun's allocator is mimalloc, linked in under its own names (the binary imports no
// malloc), so the LD_PRELOAD heap shim sees none of it; the leak gate judges this client's heap plateau from
// heap_live_objects instead (leaks/leaks_gate.py runtime_heap, as Go's MemStats).
'use strict';
const { heapStats } = require('bun:jsc');

// What is live after full collections: JavaScriptCore's objects (heap_live_objects, judged) and mimalloc's
// blocks (heap_native_blocks, shown: they climb to a plateau between 200 and 2,000 attempts and stay there,
// 43,000 then 73,000 then 69,000 after 5,000: the runtime's caches, README.md).
function runtimeHeap() {
  for (let i = 0; i < 4; i++) Bun.gc(true);  // one leaves the objects a finalizer freed to the next
  const s = heapStats();
  const mi = s.mimalloc;
  return {
    heap_live_objects: s.objectCount,
    heap_live_bytes: s.heapSize + s.extraMemorySize,
    heap_native_blocks: mi.malloc_bins.reduce((n, bin) => n + bin.current, 0),
    heap_native_bytes: mi.malloc_normal.current + mi.malloc_huge.current,
  };
}

// The adapter writes its summary as one JSON line, last: the counters join that line.
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (typeof chunk === 'string' && chunk.startsWith('{"type":"summary"'))
    chunk = JSON.stringify({ ...JSON.parse(chunk), ...runtimeHeap() }) + '\n';
  return write(chunk, ...rest);
};
require('../node/tlsnb_node.js');
