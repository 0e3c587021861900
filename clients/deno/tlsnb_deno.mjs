// tlsnb-deno: the Node adapter (clients/node/tlsnb_node.js) under Deno's node compatibility layer.
// Deno runs a .js file as an ES module, so `require` is undefined there: this module makes one
// (node:module's createRequire) and loads the Node adapter as CommonJS, unchanged.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
require('../node/tlsnb_node.js');
