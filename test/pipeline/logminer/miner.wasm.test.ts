import { formatsSuite } from './formats.cases.js';
import { minerSuite } from './miner.cases.js';

minerSuite('wasm');
formatsSuite('wasm');
