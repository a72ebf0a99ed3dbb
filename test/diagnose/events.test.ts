// Events of a diagnosis from resource rows: a restart is an instance that started while its service
// was already running, never the first appearance of every pod when the store's history begins.
import { describe, expect, it } from 'vitest';
import { newInstances, serviceEvents, startedInstances, serviceIdentity } from '../../src/diagnose/events.js';
import { STATEMENTS, type DeploymentRow } from '../../src/diagnose/queries.js';

const MIN = 60_000_000;
const LOOK_FROM = 1_800_000_000_000_000;
const row = (service: string, pod: string, first: number, last = first + 30 * MIN): DeploymentRow =>
  STATEMENTS.deployments.decode({ service_name: service, service_instance_id: pod, k8s_pod_name: pod, first_us: first, last_us: last, n: 100 });

describe('restarts only with evidence', () => {
  const start = LOOK_FROM + 40 * MIN; // the store's history begins well after the look-back does
  const rows = [row('cart', 'cart-a', start), row('cart', 'cart-b', start + 20_000_000), row('orders', 'orders-a', start)];

  it('pods that all appear when the history begins did not restart', () => {
    expect(startedInstances(rows, 'cart', LOOK_FROM)).toEqual([]);
    expect(newInstances(rows, 'cart', start - MIN, start + 60 * MIN, LOOK_FROM)).toBe(0);
    const events = serviceEvents({
      service: 'cart',
      from: start + 50 * MIN,
      lookFrom: LOOK_FROM,
      deploys: [],
      deployments: rows,
      identity: serviceIdentity(rows, 'cart', start + 50 * MIN),
      newErrorTypes: new Map(),
      firstErrorAt: new Map(),
      newPatterns: [],
    });
    expect(events.filter((e) => e.event_type === 'restart')).toEqual([]);
  });

  it('an instance that replaces another while the service runs is a restart, at its first appearance', () => {
    const replaced = [...rows, row('cart', 'cart-c', start + 25 * MIN)];
    expect(startedInstances(replaced, 'cart', LOOK_FROM)).toEqual([{ id: 'cart-c', at: start + 25 * MIN }]);
    expect(newInstances(replaced, 'cart', start + 20 * MIN, start + 30 * MIN, LOOK_FROM)).toBe(1);
    expect(newInstances(replaced, 'orders', start, start + 60 * MIN, LOOK_FROM)).toBe(0);
    const events = serviceEvents({
      service: 'cart',
      from: start + 50 * MIN,
      lookFrom: LOOK_FROM,
      deploys: [],
      deployments: replaced,
      identity: serviceIdentity(replaced, 'cart', start + 50 * MIN),
      newErrorTypes: new Map(),
      firstErrorAt: new Map(),
      newPatterns: [],
    });
    const restarts = events.filter((e) => e.event_type === 'restart');
    expect(restarts).toHaveLength(1);
    expect(restarts[0]!.description).toContain('cart-c');
    expect(restarts[0]!.detected_at_us).toBe(start + 25 * MIN);
  });
});
