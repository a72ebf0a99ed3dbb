import { classesSuite } from './classes.cases.js';

classesSuite('reference');
