// The answer of GET /admin/status: one entry per part of the instance, as a schema value with its type.
import { anyObject } from '../core/schema.js';

export const StatusSchema = anyObject('all instance status rows');
export type Status = Record<string, unknown>;
