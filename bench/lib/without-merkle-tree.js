'use strict';

/**
 * Preloaded with `node -r` into the second service the ingest and batch scenarios start: makes the
 * built `ChainTrees.prototype.grow` (apps/api/src/events/append/chain-trees.ts) a no-op, so that
 * service appends exactly as the measured one except that it writes no Merkle nodes. The bench
 * compares the two in the same run to price the tree (issue 12: within 10 %).
 *
 * The module is found next to the script being started (process.argv[1], the built main.js) and
 * loaded here, before main.js does: Node caches it by file name, so the service gets the patched
 * class. Anything unexpected throws, and the process exits before it listens: the comparison must
 * never silently measure the tree against itself. The bench also checks afterwards that this
 * service's database holds no Merkle node.
 */
const fs = require('node:fs');
const path = require('node:path');

const main = process.argv[1];
if (!main) throw new Error('without-merkle-tree: no script to start (process.argv[1] is empty)');
const file = path.join(path.dirname(main), 'events', 'append', 'chain-trees.js');
if (!fs.existsSync(file)) throw new Error(`without-merkle-tree: ${file} not found next to ${main}`);

const { ChainTrees } = require(file);
if (typeof ChainTrees !== 'function' || typeof ChainTrees.prototype.grow !== 'function') {
  throw new Error(`without-merkle-tree: ${file} exports no class ChainTrees with a method grow`);
}
ChainTrees.prototype.grow = async function grow() {};
console.log(`without-merkle-tree: ChainTrees.prototype.grow of ${file} is a no-op in this process`);
