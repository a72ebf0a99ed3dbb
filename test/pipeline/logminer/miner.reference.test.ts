import { formatsSuite } from './formats.cases.js';
import { minerSuite } from './miner.cases.js';

minerSuite('reference');
formatsSuite('reference');
