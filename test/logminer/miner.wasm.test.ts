import { minerSuite } from './miner.cases.js';

minerSuite('wasm');
