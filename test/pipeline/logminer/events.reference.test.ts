import { eventsSuite } from './events.cases.js';

eventsSuite('reference');
